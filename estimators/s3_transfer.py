"""v2's `sagemaker.s3.S3Uploader` / `S3Downloader`: S3 URIs in, the Session's calls (v2's requests) out."""

from __future__ import annotations

from typing import Any

from sagelaunch.estimators.session import Session
from sagelaunch.jobspec.s3uri import parse_s3_uri


def _session(sagemaker_session: Any) -> Any:
    return sagemaker_session or Session()


class S3Uploader:
    @staticmethod
    def upload(local_path: str, desired_s3_uri: str, kms_key: str | None = None, sagemaker_session: Any = None,
               callback: Any = None) -> str:
        bucket, key_prefix = parse_s3_uri(desired_s3_uri)
        kms = {"SSEKMSKeyId": kms_key, "ServerSideEncryption": "aws:kms"} if kms_key is not None else None
        return _session(sagemaker_session).upload_data(path=local_path, bucket=bucket, key_prefix=key_prefix,
                                                       callback=callback, extra_args=kms)

    @staticmethod
    def upload_string_as_file_body(body: str, desired_s3_uri: str, kms_key: str | None = None,
                                   sagemaker_session: Any = None) -> str:
        bucket, key = parse_s3_uri(desired_s3_uri)
        _session(sagemaker_session).upload_string_as_file_body(body=body, bucket=bucket, key=key, kms_key=kms_key)
        return desired_s3_uri


class S3Downloader:
    @staticmethod
    def download(s3_uri: str, local_path: str, kms_key: str | None = None, sagemaker_session: Any = None) -> list[str]:
        bucket, key_prefix = parse_s3_uri(s3_uri)
        extra = {"SSECustomerKey": kms_key} if kms_key is not None else None
        return _session(sagemaker_session).download_data(path=local_path, bucket=bucket, key_prefix=key_prefix,
                                                         extra_args=extra)

    @staticmethod
    def read_file(s3_uri: str, sagemaker_session: Any = None) -> str:
        bucket, key = parse_s3_uri(s3_uri)
        return _session(sagemaker_session).read_s3_file(bucket=bucket, key_prefix=key)

    @staticmethod
    def list(s3_uri: str, sagemaker_session: Any = None) -> list[str]:
        bucket, key_prefix = parse_s3_uri(s3_uri)
        return [f"s3://{bucket}/{key}" for key in _session(sagemaker_session).list_s3_files(bucket, key_prefix)]
