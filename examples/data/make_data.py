"""Derives the small data files of the comparison workload examples (run from this folder).

- camera_128.pgm: scikit-image's `camera` sample (512 x 512, 8-bit grey), 4 x 4 block means
  rounded down: 128 x 128 pixels, binary PGM.
"""
import numpy as np
from skimage import data

img = data.camera().astype(np.uint32)
small = img.reshape(128, 4, 128, 4).sum(axis=(1, 3)) // 16
with open("camera_128.pgm", "wb") as f:
    f.write(b"P5\n128 128\n255\n")
    f.write(small.astype(np.uint8).tobytes())

# - mlp_digits.txt: an MLP (64 -> 16 ReLU -> 10) trained in the clear on scikit-learn's 8 x 8
#   digits (pixels 0..16), quantized to integers: the first layer so that its outputs (the ReLU
#   inputs) stay in [-1023, 1023] on the whole dataset, the second to weights in [-15, 15]
#   (checked: every logit of the dataset below t/2 = 32768 in magnitude); then 64 test images
#   and their labels.
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

digits = load_digits()
X, y = digits.data.astype(np.int64), digits.target
Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=0)
mlp = MLPClassifier(hidden_layer_sizes=(16,), activation="relu", max_iter=2000, random_state=0)
mlp.fit(Xtr / 16.0, ytr)
float_acc = mlp.score(Xte / 16.0, yte)
W1, b1 = mlp.coefs_[0].T / 16.0, mlp.intercepts_[0]  # on raw pixels
W2, b2 = mlp.coefs_[1].T, mlp.intercepts_[1]
R = 1023
# Largest first-layer scale keeping |W1 x + b1| <= R on every image.
h = X @ W1.T + b1
s1 = R / np.abs(h).max()
W1q, b1q = np.round(W1 * s1).astype(np.int64), np.round(b1 * s1).astype(np.int64)
hq = X @ W1q.T + b1q
while np.abs(hq).max() > R:
    s1 *= 0.98
    W1q, b1q = np.round(W1 * s1).astype(np.int64), np.round(b1 * s1).astype(np.int64)
    hq = X @ W1q.T + b1q
s2 = 15 / np.abs(W2).max()
W2q = np.round(W2 * s2).astype(np.int64)
b2q = np.round(b2 * s1 * s2).astype(np.int64)


def predict_q(Xs):
    r = np.maximum(Xs @ W1q.T + b1q, 0)
    return r @ W2q.T + b2q


logits = predict_q(Xte)
assert np.abs(predict_q(X)).max() < 32768
q_acc = (logits.argmax(axis=1) == yte).mean()
n_img = 64
with open("mlp_digits.txt", "w") as f:
    f.write(f"# 64-16-10 MLP on sklearn digits, quantized; float test accuracy {float_acc:.4f}, quantized {q_acc:.4f} ({len(yte)} test images)\n")
    f.write(" ".join(map(str, W1q.ravel())) + "\n")
    f.write(" ".join(map(str, b1q)) + "\n")
    f.write(" ".join(map(str, W2q.ravel())) + "\n")
    f.write(" ".join(map(str, b2q)) + "\n")
    f.write(" ".join(map(str, Xte[:n_img].ravel())) + "\n")
    f.write(" ".join(map(str, yte[:n_img])) + "\n")
print(f"float accuracy {float_acc:.4f}, quantized {q_acc:.4f}, max |h| {np.abs(hq).max()}, max |logit| {np.abs(logits).max()}")
