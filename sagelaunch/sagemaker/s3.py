"""v2's sagemaker.s3."""
from sagelaunch.estimators.s3_transfer import S3Downloader, S3Uploader

__all__ = ["S3Uploader", "S3Downloader"]
