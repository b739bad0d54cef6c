#!/usr/bin/env python3
"""Generate the ONNX models and reference data used by hinfer's tests.

Writes into ``testdata/`` (next to ``scripts/``):

* ``digits_cnn.onnx``  Conv+BN+Relu, Conv+BN+Relu, MaxPool, Flatten, Gemm on
  scikit-learn's 8x8 digits; input ``input`` [N,1,8,8], output ``logits`` [N,10].
  The BatchNormalization nodes are kept as separate nodes (not folded).
* ``digits_mlp.onnx``  Gemm+Relu+Gemm; input ``input`` [N,64], output ``logits``.
* ``mixed_dtypes.onnx`` float16 / int64 / bool inputs and outputs.
* ``*.npy`` inputs, labels and onnxruntime reference outputs for those models.
* ``fixtures.json`` test accuracies and the files belonging to each model.

Both networks are trained here in plain numpy (hand-written backprop, Adam) in
float64 on a fixed-seed split of ``load_digits()``; the last 64 shuffled
samples are the test set. All randomness is seeded and BLAS is pinned to one
thread, so reruns on the same machine produce byte-identical files.

Usage (from anywhere):

    python scripts/make_fixtures.py           # (re)write testdata/
    python scripts/make_fixtures.py --check   # regenerate into a temp dir and
                                              # compare with testdata/; exit 1
                                              # if anything differs
"""

import os

# Pin BLAS/OpenMP to one thread before numpy is imported, so that matrix
# products (and therefore the trained weights) are reproducible.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402

TESTDATA = Path(__file__).resolve().parent.parent / "testdata"

SPLIT_SEED = 0
CNN_SEED = 1
MLP_SEED = 2
NUM_TEST = 64
NUM_CLASSES = 10

OPSET = 13
IR_VERSION = 8
PRODUCER = "hinfer-fixtures"
BN_EPS = 1e-5
BN_MOMENTUM = 0.9  # ONNX convention: running = running * m + batch * (1 - m)
MIN_ACCURACY = 0.90
ATOL = 1e-5


# --------------------------------------------------------------------------
# Data
# --------------------------------------------------------------------------

def load_split():
    """Return (x_train, y_train, x_test, y_test); x in [0, 1], shape [n, 64]."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    perm = np.random.default_rng(SPLIT_SEED).permutation(len(x))
    x, y = x[perm], y[perm]
    return x[:-NUM_TEST], y[:-NUM_TEST], x[-NUM_TEST:], y[-NUM_TEST:]


# --------------------------------------------------------------------------
# Layers (forward returns (output, cache); backward takes the cache)
# --------------------------------------------------------------------------

def im2col(x, k=3, pad=1):
    """[N,C,H,W] -> [N*H*W, C*k*k] patches for a stride-1 'same' convolution."""
    n, c, h, w = x.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    cols = np.empty((n, c, k, k, h, w), dtype=x.dtype)
    for i in range(k):
        for j in range(k):
            cols[:, :, i, j] = xp[:, :, i:i + h, j:j + w]
    return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n * h * w, c * k * k)


def col2im(dcols, shape, k=3, pad=1):
    """Adjoint of im2col: scatter-add patch gradients back to [N,C,H,W]."""
    n, c, h, w = shape
    d = dcols.reshape(n, h, w, c, k, k).transpose(0, 3, 4, 5, 1, 2)
    dxp = np.zeros((n, c, h + 2 * pad, w + 2 * pad), dtype=dcols.dtype)
    for i in range(k):
        for j in range(k):
            dxp[:, :, i:i + h, j:j + w] += d[:, :, i, j]
    return dxp[:, :, pad:pad + h, pad:pad + w]


def conv_forward(x, w, b):
    n, _, h, wd = x.shape
    f = w.shape[0]
    cols = im2col(x)
    out = cols @ w.reshape(f, -1).T + b
    return out.reshape(n, h, wd, f).transpose(0, 3, 1, 2), (cols, x.shape)


def conv_backward(dout, cache, w):
    cols, x_shape = cache
    f = w.shape[0]
    dflat = dout.transpose(0, 2, 3, 1).reshape(-1, f)
    dw = (dflat.T @ cols).reshape(w.shape)
    db = dflat.sum(axis=0)
    dx = col2im(dflat @ w.reshape(f, -1), x_shape)
    return dx, dw, db


def _per_channel(v):
    return v[None, :, None, None]


def bn_forward_train(x, gamma, beta):
    """Batch-statistics BatchNorm; also returns the batch mean/var."""
    mean = x.mean(axis=(0, 2, 3))
    var = x.var(axis=(0, 2, 3))
    inv_std = 1.0 / np.sqrt(var + BN_EPS)
    xhat = (x - _per_channel(mean)) * _per_channel(inv_std)
    out = _per_channel(gamma) * xhat + _per_channel(beta)
    return out, (xhat, inv_std, gamma), mean, var


def bn_backward(dout, cache):
    xhat, inv_std, gamma = cache
    axes = (0, 2, 3)
    m = dout.size / dout.shape[1]
    dbeta = dout.sum(axis=axes)
    dgamma = (dout * xhat).sum(axis=axes)
    dxhat = dout * _per_channel(gamma)
    dx = _per_channel(inv_std / m) * (
        m * dxhat
        - _per_channel(dxhat.sum(axis=axes))
        - xhat * _per_channel((dxhat * xhat).sum(axis=axes))
    )
    return dx, dgamma, dbeta


def bn_inference(x, gamma, beta, mean, var):
    scale = gamma / np.sqrt(var + BN_EPS)
    return x * _per_channel(scale) + _per_channel(beta - mean * scale)


def relu_forward(x):
    return np.maximum(x, 0), x > 0


def relu_backward(dout, mask):
    return dout * mask


def maxpool_forward(x):
    """2x2 max pool, stride 2."""
    n, c, h, w = x.shape
    win = (x.reshape(n, c, h // 2, 2, w // 2, 2)
           .transpose(0, 1, 2, 4, 3, 5)
           .reshape(n, c, h // 2, w // 2, 4))
    idx = win.argmax(axis=-1)[..., None]
    return np.take_along_axis(win, idx, axis=-1)[..., 0], (idx, x.shape)


def maxpool_backward(dout, cache):
    idx, (n, c, h, w) = cache
    dwin = np.zeros(dout.shape + (4,), dtype=dout.dtype)
    np.put_along_axis(dwin, idx, dout[..., None], axis=-1)
    return (dwin.reshape(n, c, h // 2, w // 2, 2, 2)
            .transpose(0, 1, 2, 4, 3, 5)
            .reshape(n, c, h, w))


def dense_forward(x, w, b):
    """Gemm with transB=1: w is [out, in]."""
    return x @ w.T + b, x


def dense_backward(dout, x, w):
    return dout @ w, dout.T @ x, dout.sum(axis=0)


def softmax_cross_entropy(logits, labels):
    z = logits - logits.max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    n = len(labels)
    loss = -np.log(p[np.arange(n), labels]).mean()
    p[np.arange(n), labels] -= 1.0
    return loss, p / n


# --------------------------------------------------------------------------
# Networks
# --------------------------------------------------------------------------

def he_normal(rng, shape, fan_in):
    return rng.normal(0.0, np.sqrt(2.0 / fan_in), size=shape)


def init_cnn(rng):
    """Conv biases start non-zero so the exported model exercises them (they
    get ~zero gradient because BN follows, and BN's running mean absorbs them)."""
    return {
        "conv1_w": he_normal(rng, (8, 1, 3, 3), 9),
        "conv1_b": rng.normal(0.0, 0.1, size=8),
        "bn1_gamma": np.ones(8),
        "bn1_beta": np.zeros(8),
        "conv2_w": he_normal(rng, (16, 8, 3, 3), 72),
        "conv2_b": rng.normal(0.0, 0.1, size=16),
        "bn2_gamma": np.ones(16),
        "bn2_beta": np.zeros(16),
        "fc_w": he_normal(rng, (NUM_CLASSES, 256), 256),
        "fc_b": np.zeros(NUM_CLASSES),
    }


def init_bn_stats():
    return {"bn1_mean": np.zeros(8), "bn1_var": np.ones(8),
            "bn2_mean": np.zeros(16), "bn2_var": np.ones(16)}


def cnn_loss_and_grads(p, stats, x, y):
    """Training-mode forward/backward; updates the BN running stats in place."""
    h, c1 = conv_forward(x, p["conv1_w"], p["conv1_b"])
    h, b1, m1, v1 = bn_forward_train(h, p["bn1_gamma"], p["bn1_beta"])
    h, r1 = relu_forward(h)
    h, c2 = conv_forward(h, p["conv2_w"], p["conv2_b"])
    h, b2, m2, v2 = bn_forward_train(h, p["bn2_gamma"], p["bn2_beta"])
    h, r2 = relu_forward(h)
    h, mp = maxpool_forward(h)
    pooled_shape = h.shape
    logits, fc = dense_forward(h.reshape(len(x), -1), p["fc_w"], p["fc_b"])
    loss, d = softmax_cross_entropy(logits, y)

    for name, mean, var in (("bn1", m1, v1), ("bn2", m2, v2)):
        stats[name + "_mean"] = BN_MOMENTUM * stats[name + "_mean"] + (1 - BN_MOMENTUM) * mean
        stats[name + "_var"] = BN_MOMENTUM * stats[name + "_var"] + (1 - BN_MOMENTUM) * var

    g = {}
    d, g["fc_w"], g["fc_b"] = dense_backward(d, fc, p["fc_w"])
    d = maxpool_backward(d.reshape(pooled_shape), mp)
    d = relu_backward(d, r2)
    d, g["bn2_gamma"], g["bn2_beta"] = bn_backward(d, b2)
    d, g["conv2_w"], g["conv2_b"] = conv_backward(d, c2, p["conv2_w"])
    d = relu_backward(d, r1)
    d, g["bn1_gamma"], g["bn1_beta"] = bn_backward(d, b1)
    _, g["conv1_w"], g["conv1_b"] = conv_backward(d, c1, p["conv1_w"])
    return loss, g


def cnn_predict(p, stats, x):
    """Inference-mode numpy forward, mirroring the exported ONNX graph."""
    h = x
    for layer in ("1", "2"):
        h = conv_forward(h, p[f"conv{layer}_w"], p[f"conv{layer}_b"])[0]
        h = bn_inference(h, p[f"bn{layer}_gamma"], p[f"bn{layer}_beta"],
                         stats[f"bn{layer}_mean"], stats[f"bn{layer}_var"])
        h = np.maximum(h, 0)
    h = maxpool_forward(h)[0]
    return h.reshape(len(x), -1) @ p["fc_w"].T + p["fc_b"]


def init_mlp(rng):
    return {
        "fc1_w": he_normal(rng, (32, 64), 64),
        "fc1_b": np.zeros(32),
        "fc2_w": he_normal(rng, (NUM_CLASSES, 32), 32),
        "fc2_b": np.zeros(NUM_CLASSES),
    }


def mlp_loss_and_grads(p, x, y):
    h, f1 = dense_forward(x, p["fc1_w"], p["fc1_b"])
    h, r1 = relu_forward(h)
    logits, f2 = dense_forward(h, p["fc2_w"], p["fc2_b"])
    loss, d = softmax_cross_entropy(logits, y)
    g = {}
    d, g["fc2_w"], g["fc2_b"] = dense_backward(d, f2, p["fc2_w"])
    d = relu_backward(d, r1)
    _, g["fc1_w"], g["fc1_b"] = dense_backward(d, f1, p["fc1_w"])
    return loss, g


def mlp_predict(p, x):
    h = np.maximum(x @ p["fc1_w"].T + p["fc1_b"], 0)
    return h @ p["fc2_w"].T + p["fc2_b"]


def train_adam(params, loss_and_grads, x, y, rng, epochs, batch_size, lr,
               name, beta1=0.9, beta2=0.999, eps=1e-8):
    """Minibatch Adam; updates params in place."""
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v = {k: np.zeros_like(v) for k, v in params.items()}
    step = 0
    for epoch in range(epochs):
        order = rng.permutation(len(x))
        losses = []
        for start in range(0, len(x), batch_size):
            idx = order[start:start + batch_size]
            loss, grads = loss_and_grads(params, x[idx], y[idx])
            losses.append(loss)
            step += 1
            for k, g in grads.items():
                m[k] = beta1 * m[k] + (1 - beta1) * g
                v[k] = beta2 * v[k] + (1 - beta2) * g * g
                m_hat = m[k] / (1 - beta1 ** step)
                v_hat = v[k] / (1 - beta2 ** step)
                params[k] -= lr * m_hat / (np.sqrt(v_hat) + eps)
        print(f"  {name} epoch {epoch + 1}/{epochs}: loss {np.mean(losses):.4f}")


# --------------------------------------------------------------------------
# ONNX export
# --------------------------------------------------------------------------

def f32_initializer(name, value):
    return numpy_helper.from_array(np.asarray(value, dtype=np.float32), name)


def finish_model(graph, doc):
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET)],
        producer_name=PRODUCER,
        ir_version=IR_VERSION,
        doc_string=doc,
    )
    onnx.checker.check_model(model, full_check=True)
    return model


def build_cnn_model(p, stats):
    inits = [f32_initializer(k, v) for k, v in {**p, **stats}.items()]
    nodes = [
        helper.make_node("Conv", ["input", "conv1_w", "conv1_b"], ["conv1"],
                         name="conv1", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["conv1", "bn1_gamma", "bn1_beta", "bn1_mean", "bn1_var"],
                         ["bn1"], name="bn1", epsilon=BN_EPS),
        helper.make_node("Relu", ["bn1"], ["relu1"], name="relu1"),
        helper.make_node("Conv", ["relu1", "conv2_w", "conv2_b"], ["conv2"],
                         name="conv2", kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization",
                         ["conv2", "bn2_gamma", "bn2_beta", "bn2_mean", "bn2_var"],
                         ["bn2"], name="bn2", epsilon=BN_EPS),
        helper.make_node("Relu", ["bn2"], ["relu2"], name="relu2"),
        helper.make_node("MaxPool", ["relu2"], ["pool"], name="pool",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc",
                         transB=1),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", NUM_CLASSES])],
        initializer=inits,
    )
    return finish_model(graph, (
        "Digit classifier for scikit-learn's 8x8 digits (pixels / 16). "
        "Conv(1->8,3x3,pad1)+BatchNormalization+Relu, Conv(8->16,3x3,pad1)+"
        "BatchNormalization+Relu, MaxPool 2x2/2, Flatten, Gemm(256->10). "
        "BatchNormalization nodes are intentionally not folded into the convs. "
        "Generated by scripts/make_fixtures.py."))


def build_mlp_model(p):
    inits = [f32_initializer(k, v) for k, v in p.items()]
    nodes = [
        helper.make_node("Gemm", ["input", "fc1_w", "fc1_b"], ["fc1"], name="fc1", transB=1),
        helper.make_node("Relu", ["fc1"], ["relu1"], name="relu1"),
        helper.make_node("Gemm", ["relu1", "fc2_w", "fc2_b"], ["logits"], name="fc2", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "digits_mlp",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", NUM_CLASSES])],
        initializer=inits,
    )
    return finish_model(graph, (
        "Digit classifier MLP for scikit-learn's 8x8 digits flattened to 64 "
        "features (pixels / 16): Gemm(64->32)+Relu+Gemm(32->10). "
        "Generated by scripts/make_fixtures.py."))


def build_mixed_model():
    inits = [
        numpy_helper.from_array(np.array(2, dtype=np.float16), "two_f16"),
        numpy_helper.from_array(np.array(1, dtype=np.int64), "one_i64"),
    ]
    nodes = [
        helper.make_node("Mul", ["a", "two_f16"], ["a_times_2"], name="mul"),
        helper.make_node("Add", ["b", "one_i64"], ["b_plus_1"], name="add"),
        helper.make_node("Not", ["c"], ["not_c"], name="not"),
        helper.make_node("Cast", ["a"], ["a_f32"], name="cast_a", to=TensorProto.FLOAT),
        helper.make_node("Cast", ["b"], ["b_f32"], name="cast_b", to=TensorProto.FLOAT),
        helper.make_node("Add", ["a_f32", "b_f32"], ["sum_f32"], name="sum"),
    ]

    def info(name, dtype):
        return helper.make_tensor_value_info(name, dtype, ["N", 4])

    graph = helper.make_graph(
        nodes, "mixed_dtypes",
        [info("a", TensorProto.FLOAT16), info("b", TensorProto.INT64),
         info("c", TensorProto.BOOL)],
        [info("a_times_2", TensorProto.FLOAT16), info("b_plus_1", TensorProto.INT64),
         info("not_c", TensorProto.BOOL), info("sum_f32", TensorProto.FLOAT)],
        initializer=inits,
    )
    return finish_model(graph, (
        "dtype conformance model: a_times_2 = a * 2 (float16), b_plus_1 = b + 1 "
        "(int64), not_c = Not(c) (bool), sum_f32 = Cast(a, float) + Cast(b, float). "
        "Generated by scripts/make_fixtures.py."))


def mixed_inputs():
    a = np.array([[0.0, 1.5, -2.25, 3.0],
                  [-0.5, 0.125, 100.5, -1.0],
                  [7.75, -3.5, 0.001, 10.0]], dtype=np.float16)
    b = np.array([[0, 1, -2, 3],
                  [-4, 5, -6, 1000],
                  [-100, 7, -1, 42]], dtype=np.int64)
    c = np.array([[True, False, True, False],
                  [False, False, True, True],
                  [True, True, False, False]], dtype=bool)
    return {"a": a, "b": b, "c": c}


# --------------------------------------------------------------------------
# onnxruntime, files, generation
# --------------------------------------------------------------------------

def ort_run(model_path, feeds):
    """Run a model file single-threaded on the CPU; returns {output name: array}."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(model_path), opts, providers=["CPUExecutionProvider"])
    names = [o.name for o in sess.get_outputs()]
    return dict(zip(names, sess.run(names, feeds)))


def save_npy(out_dir, name, array, files):
    np.save(out_dir / name, np.ascontiguousarray(array), allow_pickle=False)
    files.append(name)


def save_model(out_dir, name, model, files):
    onnx.save(model, str(out_dir / name))
    files.append(name)
    return out_dir / name


def accuracy(logits, labels):
    return float((logits.argmax(axis=1) == labels).mean())


def generate(out_dir):
    """Train, export and write all fixtures into out_dir; returns the manifest."""
    out_dir.mkdir(parents=True, exist_ok=True)
    x_train, y_train, x_test, y_test = load_split()
    cnn_x = x_test.reshape(-1, 1, 8, 8)
    common = []
    save_npy(out_dir, "digits_labels.npy", y_test, common)
    manifest = {"generator": "scripts/make_fixtures.py", "num_test": NUM_TEST, "models": {}}

    # CNN
    rng = np.random.default_rng(CNN_SEED)
    params, stats = init_cnn(rng), init_bn_stats()
    train_adam(params, lambda p, x, y: cnn_loss_and_grads(p, stats, x, y),
               x_train.reshape(-1, 1, 8, 8).astype(np.float64), y_train, rng,
               epochs=8, batch_size=32, lr=3e-3, name="cnn")
    files = []
    path = save_model(out_dir, "digits_cnn.onnx", build_cnn_model(params, stats), files)
    logits = ort_run(path, {"input": cnn_x})["logits"]
    np.testing.assert_allclose(logits, cnn_predict(params, stats, cnn_x.astype(np.float64)),
                               atol=1e-4, err_msg="ONNX CNN disagrees with numpy")
    save_npy(out_dir, "digits_cnn_input.npy", cnn_x, files)
    save_npy(out_dir, "digits_cnn_logits.npy", logits, files)
    save_npy(out_dir, "digit_cnn_one.npy", cnn_x[:1], files)
    manifest["models"]["digits_cnn"] = {
        "test_accuracy": accuracy(logits, y_test),
        "inputs": {"input": "digits_cnn_input.npy"},
        "outputs": {"logits": "digits_cnn_logits.npy"},
        "labels": "digits_labels.npy",
        "files": files + common,
    }

    # MLP
    rng = np.random.default_rng(MLP_SEED)
    params = init_mlp(rng)
    train_adam(params, mlp_loss_and_grads, x_train.astype(np.float64), y_train, rng,
               epochs=30, batch_size=32, lr=3e-3, name="mlp")
    files = []
    path = save_model(out_dir, "digits_mlp.onnx", build_mlp_model(params), files)
    logits = ort_run(path, {"input": x_test})["logits"]
    np.testing.assert_allclose(logits, mlp_predict(params, x_test.astype(np.float64)),
                               atol=1e-4, err_msg="ONNX MLP disagrees with numpy")
    save_npy(out_dir, "digits_mlp_input.npy", x_test, files)
    save_npy(out_dir, "digits_mlp_logits.npy", logits, files)
    save_npy(out_dir, "digit_mlp_one.npy", x_test[:1], files)
    manifest["models"]["digits_mlp"] = {
        "test_accuracy": accuracy(logits, y_test),
        "inputs": {"input": "digits_mlp_input.npy"},
        "outputs": {"logits": "digits_mlp_logits.npy"},
        "labels": "digits_labels.npy",
        "files": files + common,
    }

    # Mixed dtypes
    files = []
    path = save_model(out_dir, "mixed_dtypes.onnx", build_mixed_model(), files)
    feeds = mixed_inputs()
    outputs = ort_run(path, feeds)
    for name, value in {**feeds, **outputs}.items():
        save_npy(out_dir, f"mixed_{name}.npy", value, files)
    manifest["models"]["mixed_dtypes"] = {
        "inputs": {k: f"mixed_{k}.npy" for k in feeds},
        "outputs": {k: f"mixed_{k}.npy" for k in outputs},
        "files": files,
    }

    for name in ("digits_cnn", "digits_mlp"):
        acc = manifest["models"][name]["test_accuracy"]
        if acc < MIN_ACCURACY:
            sys.exit(f"{name}: test accuracy {acc:.4f} < {MIN_ACCURACY}")

    (out_dir / "fixtures.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


# --------------------------------------------------------------------------
# --check
# --------------------------------------------------------------------------

def compare_npy(new, old):
    a, b = np.load(new), np.load(old)
    if a.dtype != b.dtype or a.shape != b.shape:
        return "DIFFERS"
    if np.array_equal(a, b):
        return "same"
    if np.issubdtype(a.dtype, np.floating) and np.allclose(a, b, atol=ATOL, rtol=0):
        return "within tolerance"
    return "DIFFERS"


def compare_model(new, old, feeds):
    if new.read_bytes() == old.read_bytes():
        return "same"
    out_new, out_old = ort_run(new, feeds), ort_run(old, feeds)
    if out_new.keys() != out_old.keys():
        return "DIFFERS"
    for k in out_new:
        a, b = out_new[k], out_old[k]
        if a.dtype != b.dtype or a.shape != b.shape:
            return "DIFFERS"
        if np.issubdtype(a.dtype, np.floating):
            if not np.allclose(a, b, atol=ATOL, rtol=0):
                return "DIFFERS"
        elif not np.array_equal(a, b):
            return "DIFFERS"
    return "within tolerance"


def compare_json(new, old):
    if new.read_bytes() == old.read_bytes():
        return "same"
    return "DIFFERS"


def check():
    """Regenerate into a temp dir and compare with testdata/; returns exit code."""
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        manifest = generate(fresh)
        model_feeds = {
            f"{name}.onnx": {k: np.load(fresh / f) for k, f in info["inputs"].items()}
            for name, info in manifest["models"].items()
        }
        failed = False
        for new in sorted(fresh.iterdir()):
            old = TESTDATA / new.name
            if not old.exists():
                status = "DIFFERS (missing from testdata/)"
            elif new.suffix == ".npy":
                status = compare_npy(new, old)
            elif new.suffix == ".onnx":
                status = compare_model(new, old, model_feeds[new.name])
            else:
                status = compare_json(new, old)
            failed |= status.startswith("DIFFERS")
            print(f"{new.name}: {status}")
        generated = {p.name for p in fresh.iterdir()}
        for extra in sorted(p.name for p in TESTDATA.iterdir() if p.name not in generated):
            print(f"{extra}: not generated by this script (ignored)")
    print("check FAILED" if failed else "check passed")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="regenerate into a temp dir and compare with testdata/")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.check:
        code = check()
    else:
        manifest = generate(TESTDATA)
        for name in ("digits_cnn", "digits_mlp"):
            print(f"{name}: test accuracy {manifest['models'][name]['test_accuracy']:.4f}")
        print(f"wrote {len(list(TESTDATA.iterdir()))} files to {TESTDATA}")
        code = 0
    print(f"done in {time.perf_counter() - start:.1f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
