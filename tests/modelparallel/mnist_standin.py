"""What the vendored MNIST SMP example (tests/data/smp_examples/mnist) takes from torchvision and torchnet, for a
machine where torchvision's wheel does not load beside CPU torch and nothing can be downloaded. Its one mechanical
change imports these names from here instead (mnist/upstream.json says so). They behave as the libraries do on what
the script calls: `datasets.MNIST(root, train, download, transform)` reads the MNIST IDX files under
root/MNIST/raw (the test writes small synthetic ones in that format; a download is refused), `transforms.ToTensor`
and `Normalize` give torchvision's numbers for a 28×28 uint8 image, and `SplitDataset` splits into torchnet's
contiguous partitions (names sorted, fractions rounded to sizes)."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import numpy as np
import torch

IDX_FILES = {True: ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"),
             False: ("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte")}


def read_idx(path: Path) -> torch.Tensor:
    """An IDX file of unsigned bytes (magic 0x0000080N, N big-endian dimension sizes, then the data)."""
    raw = path.read_bytes()
    zero, kind, dims = struct.unpack(">HBB", raw[:4])
    if zero != 0 or kind != 0x08:
        raise ValueError(f"{path}: not an IDX file of unsigned bytes")
    shape = struct.unpack(f">{dims}I", raw[4:4 + 4 * dims])
    return torch.from_numpy(np.frombuffer(raw, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape).copy())


def write_idx(path: Path, data: np.ndarray) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    header = struct.pack(">HBB", 0, 0x08, data.ndim) + struct.pack(f">{data.ndim}I", *data.shape)
    path.write_bytes(header + data.astype(np.uint8).tobytes())


class MNIST(torch.utils.data.Dataset):
    def __init__(self, root: str, train: bool = True, transform: Callable | None = None, download: bool = False):
        raw = Path(root) / "MNIST" / "raw"
        images, labels = (raw / name for name in IDX_FILES[train])
        if not images.exists():  # torchvision downloads only what is missing
            raise RuntimeError(f"{images} is missing and this machine cannot download MNIST (download={download})")
        self.data, self.targets = read_idx(images), read_idx(labels).long()
        self.transform = transform

    def __len__(self) -> int:
        return len(self.data)

    def __getitem__(self, index: int) -> tuple[Any, int]:
        image = self.data[index]
        return (self.transform(image) if self.transform else image), int(self.targets[index])


class ToTensor:
    def __call__(self, image: torch.Tensor) -> torch.Tensor:  # H×W uint8 → 1×H×W float in [0, 1]
        return image.unsqueeze(0).float().div(255)


class Normalize:
    def __init__(self, mean: tuple[float, ...], std: tuple[float, ...]):
        self.mean, self.std = torch.tensor(mean).view(-1, 1, 1), torch.tensor(std).view(-1, 1, 1)

    def __call__(self, tensor: torch.Tensor) -> torch.Tensor:
        return (tensor - self.mean) / self.std


class Compose:
    def __init__(self, steps: list[Callable]):
        self.steps = steps

    def __call__(self, value: Any) -> Any:
        for step in self.steps:
            value = step(value)
        return value


class SplitDataset(torch.utils.data.Dataset):
    def __init__(self, dataset: Any, partitions: dict[str, float]):
        self.dataset = dataset
        self.names = sorted(partitions)
        sizes = [partitions[name] for name in self.names]
        if sum(sizes) <= 1:  # fractions of the dataset
            sizes = [round(size * len(dataset)) for size in sizes]
        self.sizes = [int(size) for size in sizes]
        self.starts = np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).tolist()
        self.current: int | None = None

    def select(self, name: str) -> None:
        self.current = self.names.index(name)

    def __len__(self) -> int:
        if self.current is None:
            raise ValueError("Select a partition before accessing data.")
        return self.sizes[self.current]

    def __getitem__(self, index: int) -> Any:
        if self.current is None:
            raise ValueError("Select a partition before accessing data.")
        return self.dataset[int(self.starts[self.current]) + index]


datasets = SimpleNamespace(MNIST=MNIST)
transforms = SimpleNamespace(ToTensor=ToTensor, Normalize=Normalize, Compose=Compose)
