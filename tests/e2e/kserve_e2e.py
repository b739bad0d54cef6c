"""End-to-end checks of `hinfer serve` with the real Triton client.

Run by `crates/cli/tests/serve_e2e.rs` (part of `cargo test --workspace`), which
starts the servers on port 0 and passes their addresses:

    python3 tests/e2e/kserve_e2e.py --url 127.0.0.1:PORT --testdata testdata \
        [--overload-url ...] [--auth-url ... --auth-token T]

Prints one line per check and a closing `N passed, N failed`; exits 1 on failure.
"""

import argparse
import json
import sys
import threading
import traceback
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

MODEL = "digits_cnn"


def http(url, path, body=None, headers=None, method=None):
    """A raw request; returns (status, headers, body bytes)."""
    data = body if isinstance(body, (bytes, type(None))) else json.dumps(body).encode()
    req = urllib.request.Request(f"http://{url}{path}", data=data, headers=headers or {}, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def expect_error(url, path, body, status, needle, headers=None):
    code, _, raw = http(url, path, body, headers)
    assert code == status, f"{path}: expected {status}, got {code}: {raw[:300]!r}"
    message = json.loads(raw)["error"]
    assert needle in message, f"expected {needle!r} in {message!r}"


class Checks:
    def __init__(self, args):
        self.args = args
        self.url = args.url
        data = Path(args.testdata)
        self.x = np.load(data / "digits_cnn_input.npy")
        self.logits = np.load(data / "digits_cnn_logits.npy")
        self.client = httpclient.InferenceServerClient(url=self.url)

    def infer(self, rows, binary, client=None, headers=None):
        inp = httpclient.InferInput("input", list(self.x[rows].shape), "FP32")
        inp.set_data_from_numpy(self.x[rows], binary_data=binary)
        out = httpclient.InferRequestedOutput("logits", binary_data=binary)
        result = (client or self.client).infer(MODEL, [inp], outputs=[out], headers=headers)
        return result.as_numpy("logits")

    def good_request_still_works(self):
        got = self.infer(slice(0, 2), True)
        np.testing.assert_allclose(got, self.logits[0:2], atol=1e-4)

    # -- the client API -------------------------------------------------------
    def check_health_and_metadata(self):
        assert self.client.is_server_live()
        assert self.client.is_server_ready()
        assert self.client.is_model_ready(MODEL)
        assert self.client.is_model_ready(MODEL, "1")
        meta = self.client.get_model_metadata(MODEL)
        assert meta["name"] == MODEL and meta["versions"] == ["1"], meta
        assert meta["inputs"] == [{"name": "input", "datatype": "FP32", "shape": [-1, 1, 8, 8]}], meta
        assert meta["outputs"] == [{"name": "logits", "datatype": "FP32", "shape": [-1, 10]}], meta
        server = self.client.get_server_metadata()
        assert server["name"] == "hinfer" and "binary_tensor_data" in server["extensions"], server

    def check_model_config(self):
        config = self.client.get_model_config(MODEL)
        assert config["max_batch_size"] == 8, config
        assert config["input"] == [{"name": "input", "data_type": "TYPE_FP32", "dims": [1, 8, 8]}], config
        assert config["output"] == [{"name": "logits", "data_type": "TYPE_FP32", "dims": [10]}], config
        assert "dynamic_batching" in config, config
        assert self.client.get_model_config(MODEL, "1")["name"] == MODEL

    def check_infer_json(self):
        np.testing.assert_allclose(self.infer(slice(0, 4), False), self.logits[0:4], atol=1e-4)

    def check_infer_binary(self):
        np.testing.assert_allclose(self.infer(slice(4, 12), True), self.logits[4:12], atol=1e-4)

    def check_infer_every_row_matches_reference(self):
        for i in range(0, 64, 8):
            np.testing.assert_allclose(self.infer(slice(i, i + 8), i % 16 == 0), self.logits[i : i + 8], atol=1e-4)

    def check_request_id_and_parameters(self):
        body = {
            "id": "req-42",
            "parameters": {"priority": 1, "timeout": 5_000_000},
            "inputs": [{"name": "input", "shape": [1, 1, 8, 8], "datatype": "FP32", "data": self.x[0].ravel().tolist()}],
        }
        code, _, raw = http(self.url, f"/v2/models/{MODEL}/infer", body)
        assert code == 200, raw
        reply = json.loads(raw)
        assert reply["id"] == "req-42" and reply["model_name"] == MODEL and reply["model_version"] == "1", reply
        np.testing.assert_allclose(np.array(reply["outputs"][0]["data"]), self.logits[0], atol=1e-4)

    def check_nested_data_and_nan(self):
        nested = self.x[0:1].tolist()
        nested[0][0][0][0] = "NaN"
        body = {"inputs": [{"name": "input", "shape": [1, 1, 8, 8], "datatype": "FP32", "data": nested}]}
        code, _, raw = http(self.url, f"/v2/models/{MODEL}/infer", body)
        assert code == 200, raw
        data = json.loads(raw)["outputs"][0]["data"]
        assert all(v == "NaN" for v in data), data  # NaN propagates through the CNN

    # -- bad input: right status, JSON message, server keeps serving ----------
    def check_bad_requests(self):
        infer = f"/v2/models/{MODEL}/infer"
        row = self.x[0].ravel().tolist()
        good = lambda **kw: {"inputs": [{"name": "input", "shape": [1, 1, 8, 8], "datatype": "FP32", "data": row, **kw}]}
        cases = [
            (b'{"inputs": [', 400, "malformed JSON"),
            (good(name="pixels"), 400, "unknown input `pixels`"),
            (good(shape=[1, 1, 8, 7]), 400, "does not match the model's"),
            (good(datatype="INT64"), 400, "datatype INT64"),
            (good(data=row[:-1]), 400, "holds 64 elements"),
            ({"inputs": [{"name": "input", "shape": [9, 1, 8, 8], "datatype": "FP32", "data": row * 9}]}, 400, "max_batch_size 8"),
            ({"inputs": []}, 400, "missing input `input`"),
            (good(), 404, "unknown model `nope`"),
        ]
        for body, status, needle in cases:
            path = "/v2/models/nope/infer" if status == 404 else infer
            expect_error(self.url, path, body, status, needle)
            self.good_request_still_works()
        expect_error(self.url, f"/v2/models/{MODEL}/versions/7/infer", good(), 404, "no version `7`")
        expect_error(self.url, "/v2/models/nope", None, 404, "unknown model")
        expect_error(self.url, "/v2/nothing/here", None, 404, "no route")
        big = json.dumps({"inputs": [{"name": "input", "shape": [1], "datatype": "FP32", "data": [0.0] * 200_000}]})
        expect_error(self.url, infer, big.encode(), 413, "exceeds the limit")
        try:
            self.client.get_model_metadata("nope")
            raise AssertionError("unknown model accepted")
        except InferenceServerException as e:
            assert "unknown model" in str(e), e
        self.good_request_still_works()

    def check_binary_framing_errors(self):
        header = json.dumps(
            {"inputs": [{"name": "input", "shape": [1, 1, 8, 8], "datatype": "FP32", "parameters": {"binary_data_size": 256}}]}
        ).encode()
        body = header + self.x[0].astype("<f4").tobytes()[:100]
        expect_error(
            self.url, f"/v2/models/{MODEL}/infer", body, 400, "runs past",
            headers={"Inference-Header-Content-Length": str(len(header))},
        )
        # perf_analyzer in JSON mode sends the header length equal to the whole body: plain JSON.
        plain = json.dumps(
            {"inputs": [{"name": "input", "shape": [1, 1, 8, 8], "datatype": "FP32", "data": self.x[0].ravel().tolist()}]}
        ).encode()
        code, _, raw = http(
            self.url, f"/v2/models/{MODEL}/infer", plain, headers={"Inference-Header-Content-Length": str(len(plain))}
        )
        assert code == 200, raw

    def check_metrics_and_stats(self):
        code, headers, raw = http(self.url, "/metrics")
        text = raw.decode()
        assert code == 200 and headers["content-type"].startswith("text/plain"), headers
        for name in [
            "hinfer_inference_request_success",
            "hinfer_inference_request_failure",
            "hinfer_inference_count",
            "hinfer_inference_exec_count",
            "hinfer_inference_pending_request_count",
            "hinfer_inference_queue_duration_us_bucket",
            "hinfer_inference_compute_infer_duration_us_sum",
        ]:
            assert name in text, f"{name} missing from /metrics"
        assert 'reason="invalid_input"' in text
        stats = self.client.get_inference_statistics(MODEL)["model_stats"][0]
        s = stats["inference_stats"]
        assert s["success"]["count"] > 0 and s["queue"]["count"] == s["success"]["count"], s
        assert s["compute_input"]["count"] == s["compute_infer"]["count"] == s["compute_output"]["count"], s
        assert stats["inference_count"] >= stats["execution_count"] > 0, stats

    # -- overload: a queue limit answers excess requests at once --------------
    def check_overload(self):
        url = self.args.overload_url
        if not url:
            return
        results = []
        lock = threading.Lock()

        def one(i):
            body = {"inputs": [{"name": "input", "shape": [1, 1, 8, 8], "datatype": "FP32", "data": self.x[i % 64].ravel().tolist()}]}
            code, _, raw = http(url, f"/v2/models/{MODEL}/infer", body)
            with lock:
                results.append((i, code, raw))

        threads = [threading.Thread(target=one, args=(i,)) for i in range(48)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = [c for _, c, _ in results]
        assert len(results) == 48
        assert codes.count(503) > 0, f"no request was refused: {codes}"
        assert set(codes) <= {200, 503}, codes
        for i, code, raw in results:
            if code == 200:
                got = np.array(json.loads(raw)["outputs"][0]["data"], dtype=np.float32)
                np.testing.assert_allclose(got, self.logits[i % 64], atol=1e-4)
            else:
                assert "queue is full" in json.loads(raw)["error"]
        print(f"  overload: {codes.count(200)} answered, {codes.count(503)} refused with 503")

    def check_auth(self):
        url = self.args.auth_url
        if not url:
            return
        expect_error(url, f"/v2/models/{MODEL}", None, 401, "bearer token")
        assert http(url, "/v2/health/live")[0] == 200, "health must not need the token"
        client = httpclient.InferenceServerClient(url=url)
        headers = {"Authorization": f"Bearer {self.args.auth_token}"}
        np.testing.assert_allclose(self.infer(slice(0, 1), True, client, headers), self.logits[0:1], atol=1e-4)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", required=True, help="host:port of a server serving the bundled digits_cnn")
    parser.add_argument("--testdata", required=True, help="the repository's testdata folder")
    parser.add_argument("--overload-url", help="a server started with a small --max-queue-size")
    parser.add_argument("--auth-url", help="a server started with --auth-token")
    parser.add_argument("--auth-token", help="the token of --auth-url")
    args = parser.parse_args()
    checks = Checks(args)
    names = [n for n in dir(checks) if n.startswith("check_")]
    failed = 0
    for name in names:
        try:
            getattr(checks, name)()
            print(f"ok   {name}")
        except Exception:  # noqa: BLE001 - report every failure, keep going
            failed += 1
            print(f"FAIL {name}\n{traceback.format_exc()}")
    print(f"{len(names) - failed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
