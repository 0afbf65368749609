"""`plt.subplots(nrows, ncols, …)` → (figure, axes) whose `imshow` draws nothing: what the notebooks call."""


class _Axes:
    def imshow(self, *args, **kwargs):
        return None


def subplots(nrows=1, ncols=1, **kwargs):
    count = nrows * ncols
    axes = [_Axes() for _ in range(count)]
    return object(), axes[0] if count == 1 else axes
