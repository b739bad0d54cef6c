//! A minimal blocking HTTP/1.1 client with keep-alive: enough to drive a
//! KServe endpoint without a client library's overhead in the measurement.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// What can go wrong talking to the server.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error("connection to {addr}: {source}")]
    Io { addr: String, source: std::io::Error },
    #[error("malformed response from {addr}: {reason}")]
    Protocol { addr: String, reason: String },
}

/// One persistent connection.
pub struct HttpClient {
    addr: String,
    reader: BufReader<TcpStream>,
    writer: TcpStream,
}

impl HttpClient {
    /// Connects to `addr` (`host:port`).
    pub fn connect(addr: &str) -> Result<HttpClient, HttpError> {
        let io = |source| HttpError::Io {
            addr: addr.to_string(),
            source,
        };
        let stream = TcpStream::connect(addr).map_err(io)?;
        stream.set_nodelay(true).map_err(io)?;
        stream.set_read_timeout(Some(Duration::from_secs(60))).map_err(io)?;
        let writer = stream.try_clone().map_err(io)?;
        Ok(HttpClient {
            addr: addr.to_string(),
            reader: BufReader::new(stream),
            writer,
        })
    }

    /// Sends `POST path` with `body` and extra `headers`; returns status and body.
    pub fn post(&mut self, path: &str, headers: &[(&str, String)], body: &[u8]) -> Result<(u16, Vec<u8>), HttpError> {
        let mut head = format!(
            "POST {path} HTTP/1.1\r\nHost: {}\r\nContent-Length: {}\r\n",
            self.addr,
            body.len()
        );
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let io = |source| HttpError::Io {
            addr: self.addr.clone(),
            source,
        };
        self.writer.write_all(head.as_bytes()).map_err(io)?;
        self.writer.write_all(body).map_err(io)?;
        self.read_response()
    }

    fn read_response(&mut self) -> Result<(u16, Vec<u8>), HttpError> {
        let addr = self.addr.clone();
        let protocol = |reason: &str| HttpError::Protocol {
            addr: addr.clone(),
            reason: reason.to_string(),
        };
        let io = |source| HttpError::Io {
            addr: addr.clone(),
            source,
        };
        let mut line = String::new();
        self.reader.read_line(&mut line).map_err(io)?;
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| protocol("no status line"))?;
        let mut length = None;
        loop {
            line.clear();
            if self.reader.read_line(&mut line).map_err(io)? == 0 {
                return Err(protocol("connection closed in headers"));
            }
            let l = line.trim_end();
            if l.is_empty() {
                break;
            }
            if let Some((name, value)) = l.split_once(':') {
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let length = length.ok_or_else(|| protocol("no content-length"))?;
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).map_err(io)?;
        Ok((status, body))
    }
}
