"""v2's sagemaker.s3."""
from sagelaunch.sagemaker import _not_mirrored
from sagelaunch.estimators.s3_transfer import S3Downloader, S3Uploader

__all__ = ["S3Uploader", "S3Downloader"]

__getattr__ = _not_mirrored.refusing_getattr(__name__)  # a v2 name not mirrored: refused by name
