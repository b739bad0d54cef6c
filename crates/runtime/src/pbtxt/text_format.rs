//! Protobuf text format, read into a generic tree of fields: a tokenizer and a
//! recursive parser that accept any valid text, whatever its fields. Mapping the
//! tree onto Triton's model configuration is the parent module's job.

use std::iter::Peekable;
use std::str::Chars;

use super::{PbtxtError, Position, Result};

/// The deepest nesting of messages accepted (real configs nest 3 or 4 deep).
pub(super) const MAX_DEPTH: usize = 64;

/// Parses protobuf text format into its top-level fields.
pub(super) fn parse(text: &str) -> Result<Vec<Field>> {
    let tokens = tokenize(text)?;
    Parser { tokens, next: 0 }.message_body(None, 0)
}

// ---------------------------------------------------------------- tokenizer

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A field name, an enum value, `true`, `inf`, ...
    Word(String),
    /// Digits, sign, point, exponent, hex: checked when the field's type is known.
    Number(String),
    /// A quoted string, escapes resolved.
    Str(String),
    Punct(char),
    End,
}

impl Tok {
    /// How an error message shows the token.
    fn describe(&self) -> String {
        match self {
            Tok::Word(w) | Tok::Number(w) => format!("`{w}`"),
            Tok::Str(s) => format!("{s:?}"),
            Tok::Punct(c) => format!("'{c}'"),
            Tok::End => "the end of the file".to_string(),
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    at: Position,
}

fn syntax(at: Position, expected: impl Into<String>, found: impl Into<String>) -> PbtxtError {
    PbtxtError::Syntax {
        at,
        expected: expected.into(),
        found: found.into(),
    }
}

/// Splits the text into tokens; the last one is always [`Tok::End`].
fn tokenize(text: &str) -> Result<Vec<Token>> {
    let mut lexer = Lexer {
        chars: text.chars().peekable(),
        line: 1,
        column: 1,
    };
    let mut tokens = Vec::new();
    loop {
        let token = lexer.next_token()?;
        let end = token.tok == Tok::End;
        tokens.push(token);
        if end {
            return Ok(tokens);
        }
    }
}

struct Lexer<'a> {
    chars: Peekable<Chars<'a>>,
    line: usize,
    column: usize,
}

impl Lexer<'_> {
    fn here(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.chars.next()?;
        if c == '\n' {
            self.line += 1;
            self.column = 1;
        } else {
            self.column += 1;
        }
        Some(c)
    }

    fn skip_blanks_and_comments(&mut self) {
        while let Some(&c) = self.chars.peek() {
            if c == '#' {
                while self.chars.peek().is_some_and(|&c| c != '\n') {
                    self.bump();
                }
            } else if c.is_whitespace() {
                self.bump();
            } else {
                break;
            }
        }
    }

    fn next_token(&mut self) -> Result<Token> {
        self.skip_blanks_and_comments();
        let at = self.here();
        let Some(&c) = self.chars.peek() else {
            return Ok(Token { tok: Tok::End, at });
        };
        let tok = match c {
            ':' | '{' | '}' | '[' | ']' | '<' | '>' | ',' | ';' => {
                self.bump();
                Tok::Punct(c)
            }
            '"' | '\'' => Tok::Str(self.string(at)?),
            c if c.is_ascii_alphabetic() || c == '_' => {
                Tok::Word(self.take_while(|c| c.is_ascii_alphanumeric() || c == '_'))
            }
            c if c.is_ascii_digit() || matches!(c, '-' | '+' | '.') => Tok::Number(self.number()),
            other => {
                return Err(syntax(
                    at,
                    "a field name, a value or one of : { } [ ] < > , ;",
                    format!("{other:?}"),
                ))
            }
        };
        Ok(Token { tok, at })
    }

    fn take_while(&mut self, keep: impl Fn(char) -> bool) -> String {
        let mut out = String::new();
        while let Some(&c) = self.chars.peek() {
            if !keep(c) {
                break;
            }
            out.push(c);
            self.bump();
        }
        out
    }

    /// A sign, then digits, letters, `.` and exponent signs (`1.5e-3`, `0x1F`, `-inf`).
    fn number(&mut self) -> String {
        let mut out = String::new();
        if let Some(&sign @ ('-' | '+')) = self.chars.peek() {
            out.push(sign);
            self.bump();
        }
        while let Some(&c) = self.chars.peek() {
            let exponent_sign = matches!(c, '-' | '+')
                && out.ends_with(['e', 'E'])
                && !out.trim_start_matches(['-', '+']).starts_with("0x");
            if !(c.is_ascii_alphanumeric() || c == '.' || c == '_' || exponent_sign) {
                break;
            }
            out.push(c);
            self.bump();
        }
        out
    }

    /// A quoted string starting at `at`; the text format forbids line breaks inside.
    fn string(&mut self, at: Position) -> Result<String> {
        let quote = self.bump().unwrap_or('"');
        let mut out = String::new();
        loop {
            let here = self.here();
            match self.bump() {
                None | Some('\n') => {
                    return Err(syntax(
                        at,
                        format!("a closing {quote} for the string opened here"),
                        "the end of the line",
                    ))
                }
                Some(c) if c == quote => return Ok(out),
                Some('\\') => out.push(self.escape(here)?),
                Some(c) => out.push(c),
            }
        }
    }

    /// The character of a C escape sequence whose backslash is at `at`.
    fn escape(&mut self, at: Position) -> Result<char> {
        let c = self.bump();
        let simple = match c {
            Some('n') => Some('\n'),
            Some('t') => Some('\t'),
            Some('r') => Some('\r'),
            Some('a') => Some('\x07'),
            Some('b') => Some('\x08'),
            Some('f') => Some('\x0c'),
            Some('v') => Some('\x0b'),
            Some(c @ ('\\' | '\'' | '"' | '?')) => Some(c),
            _ => None,
        };
        if let Some(c) = simple {
            return Ok(c);
        }
        let (radix, first, max_digits) = match c {
            Some(d @ '0'..='7') => (8, d.to_digit(8), 3),
            Some('x' | 'X') => (16, None, 2),
            other => {
                let found = other.map_or("the end of the file".to_string(), |c| format!("'\\{c}'"));
                return Err(syntax(at, "an escape such as \\n, \\\" or \\x41", found));
            }
        };
        let mut digits = u32::from(first.is_some());
        let mut value = first.unwrap_or(0);
        while digits < max_digits {
            let Some(d) = self.chars.peek().and_then(|c| c.to_digit(radix)) else {
                break;
            };
            value = value * radix + d;
            digits += 1;
            self.bump();
        }
        match char::from_u32(value) {
            Some(c) if digits > 0 && value <= 0xff => Ok(c),
            _ => Err(syntax(at, "an escape such as \\n, \\\" or \\x41", "a malformed escape")),
        }
    }
}

// ---------------------------------------------------------------- parser

/// A field of the generic tree: a list `f: [a, b]` becomes two fields `f`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Field {
    pub(super) name: String,
    /// Where the value starts (for list elements) or the field's name.
    pub(super) at: Position,
    pub(super) value: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Value {
    Scalar(Scalar),
    Message(Vec<Field>),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Scalar {
    pub(super) text: String,
    /// Whether it was a quoted string (else an identifier or a number).
    pub(super) quoted: bool,
}

/// Where a message ends: its closing character, its field name, where it opened.
type Closer<'a> = Option<(char, &'a str, Position)>;

struct Parser {
    tokens: Vec<Token>,
    next: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        // `tokenize` always ends with `End`, and `advance` never steps past it.
        &self.tokens[self.next.min(self.tokens.len() - 1)]
    }

    fn advance(&mut self) -> Token {
        let token = self.peek().clone();
        if token.tok != Tok::End {
            self.next += 1;
        }
        token
    }

    /// Fields up to `close` (or the end of the file at the top level).
    fn message_body(&mut self, close: Closer<'_>, depth: usize) -> Result<Vec<Field>> {
        let mut fields = Vec::new();
        loop {
            let token = self.peek().clone();
            match &token.tok {
                Tok::Word(name) => {
                    self.advance();
                    self.field(name, token.at, &mut fields, depth)?;
                    if matches!(self.peek().tok, Tok::Punct(',' | ';')) {
                        self.advance();
                    }
                }
                Tok::Punct(c) if close.is_some_and(|(closing, ..)| closing == *c) => {
                    self.advance();
                    return Ok(fields);
                }
                Tok::End if close.is_none() => return Ok(fields),
                other => {
                    let expected = match close {
                        Some((closing, name, opened)) => {
                            format!("a field name or '{closing}' to close `{name}` opened at {opened}")
                        }
                        None => "a field name".to_string(),
                    };
                    return Err(syntax(token.at, expected, other.describe()));
                }
            }
        }
    }

    /// The rest of a field whose name was just read.
    fn field(&mut self, name: &str, at: Position, out: &mut Vec<Field>, depth: usize) -> Result<()> {
        let token = self.peek().clone();
        match token.tok {
            Tok::Punct(':') => {
                self.advance();
                let value = self.peek().clone();
                match value.tok {
                    Tok::Punct('[') => self.list(name, out, depth),
                    Tok::Punct('{' | '<') => self.push_message(name, at, out, depth),
                    _ => match self.scalar() {
                        Some(scalar) => {
                            out.push(Field {
                                name: name.to_string(),
                                at,
                                value: Value::Scalar(scalar),
                            });
                            Ok(())
                        }
                        None => Err(syntax(value.at, "a value after ':'", value.tok.describe())),
                    },
                }
            }
            Tok::Punct('{' | '<') => self.push_message(name, at, out, depth),
            Tok::Punct('[') => self.list(name, out, depth),
            other => Err(syntax(
                token.at,
                format!("':' or '{{' after the field name `{name}`"),
                other.describe(),
            )),
        }
    }

    fn push_message(&mut self, name: &str, at: Position, out: &mut Vec<Field>, depth: usize) -> Result<()> {
        let fields = self.message(name, depth)?;
        out.push(Field {
            name: name.to_string(),
            at,
            value: Value::Message(fields),
        });
        Ok(())
    }

    /// `{ ... }` or `< ... >`, the opening token next.
    fn message(&mut self, name: &str, depth: usize) -> Result<Vec<Field>> {
        let open = self.advance();
        if depth >= MAX_DEPTH {
            return Err(syntax(
                open.at,
                format!("at most {MAX_DEPTH} nested messages"),
                "a deeper one",
            ));
        }
        let closing = if open.tok == Tok::Punct('<') { '>' } else { '}' };
        self.message_body(Some((closing, name, open.at)), depth + 1)
    }

    /// `[ a, b ]` or `[ {...}, {...} ]`, the `[` next; each element becomes a field.
    fn list(&mut self, name: &str, out: &mut Vec<Field>, depth: usize) -> Result<()> {
        let open = self.advance();
        if self.peek().tok == Tok::Punct(']') {
            self.advance();
            return Ok(());
        }
        loop {
            let element = self.peek().clone();
            let value = match element.tok {
                Tok::Punct('{' | '<') => Value::Message(self.message(name, depth)?),
                _ => match self.scalar() {
                    Some(scalar) => Value::Scalar(scalar),
                    None => {
                        return Err(syntax(
                            element.at,
                            format!("a value in the list `{name}`"),
                            element.tok.describe(),
                        ))
                    }
                },
            };
            out.push(Field {
                name: name.to_string(),
                at: element.at,
                value,
            });
            let separator = self.advance();
            match separator.tok {
                Tok::Punct(',') => {}
                Tok::Punct(']') => return Ok(()),
                other => {
                    return Err(syntax(
                        separator.at,
                        format!("',' or ']' in the list `{name}` opened at {}", open.at),
                        other.describe(),
                    ))
                }
            }
        }
    }

    /// An identifier, a number, or adjacent strings joined; `None` if none is next.
    fn scalar(&mut self) -> Option<Scalar> {
        match &self.peek().tok {
            Tok::Word(text) | Tok::Number(text) => {
                let scalar = Scalar {
                    text: text.clone(),
                    quoted: false,
                };
                self.advance();
                Some(scalar)
            }
            Tok::Str(_) => {
                let mut text = String::new();
                while let Tok::Str(part) = &self.peek().tok {
                    text.push_str(part);
                    self.advance();
                }
                Some(Scalar { text, quoted: true })
            }
            _ => None,
        }
    }
}
