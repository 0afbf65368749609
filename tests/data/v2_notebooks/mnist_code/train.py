"""Training script in the shape of the AWS getting-started MNIST notebooks (sagelaunch's own code): reads the idx
`.gz` files from the `training` and `testing` channels, trains a tiny classifier and saves `model.pth`."""
import argparse
import gzip
import json
import os

import numpy as np
import torch
from torch import nn


def load(folder, prefix):
    with gzip.open(os.path.join(folder, f"{prefix}-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 1, 28, 28).astype(np.float32) / 255
    with gzip.open(os.path.join(folder, f"{prefix}-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8).astype(np.int64)
    return torch.from_numpy(images), torch.from_numpy(labels)


def net():
    return nn.Sequential(nn.Flatten(), nn.Linear(28 * 28, 16), nn.ReLU(), nn.Linear(16, 10), nn.LogSoftmax(dim=1))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--learning-rate", type=float, default=1e-3)
    parser.add_argument("--hosts", type=json.loads, default=os.environ["SM_HOSTS"])
    parser.add_argument("--model-dir", default=os.environ["SM_MODEL_DIR"])
    parser.add_argument("--train", default=os.environ["SM_CHANNEL_TRAINING"])
    parser.add_argument("--test", default=os.environ["SM_CHANNEL_TESTING"])
    parser.add_argument("--num-gpus", type=int, default=os.environ["SM_NUM_GPUS"])
    args = parser.parse_args()
    (x, y), (tx, ty) = load(args.train, "train"), load(args.test, "t10k")
    model, loss_fn = net(), nn.NLLLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.learning_rate)
    for epoch in range(1, args.epochs + 1):
        for start in range(0, len(x), args.batch_size):
            optimizer.zero_grad()
            loss = loss_fn(model(x[start:start + args.batch_size]), y[start:start + args.batch_size])
            loss.backward()
            optimizer.step()
        with torch.no_grad():
            correct = (model(tx).argmax(1) == ty).sum().item()
        print(f"epoch {epoch}: {len(x)} images, test accuracy {correct}/{len(tx)}")
    torch.save(model.state_dict(), os.path.join(args.model_dir, "model.pth"))
