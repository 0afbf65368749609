"""Benchmark: what sagelaunch's SageMaker submission costs over the bare boto3 calls, side by side.

Against an in-process moto server (no AWS account): for the same source folder,
  A) sagelaunch: submit(spec, wait=False) — role/name/input checks, default bucket, pack, upload,
     CreateTrainingJob with botocore standard retries;
  B) bare boto3: tar the folder, put_object, create_training_job with the same request.
and, for a large archive, a multipart upload (s3transfer, 4 threads) against one put_object.
Prints medians and ratios; nothing is asserted.  Usage: python -m scripts.bench_sagemaker_submit [--runs N] [--mb M]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tarfile
import tempfile
import time
from pathlib import Path


def _median_ms(fn, runs: int) -> float:
    times = []
    for i in range(runs):
        start = time.perf_counter()
        fn(i)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--mb", type=int, default=64, help="size of the large archive for the upload comparison")
    args = parser.parse_args()

    os.environ.update(AWS_ACCESS_KEY_ID="testing", AWS_SECRET_ACCESS_KEY="testing", AWS_REGION="us-west-2",
                      AWS_DEFAULT_REGION="us-west-2")
    import logging

    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # one line per request otherwise

    from sagelaunch.jobspec.net import free_port

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    os.environ["AWS_ENDPOINT_URL"] = f"http://127.0.0.1:{port}"
    import boto3

    from sagelaunch.launcher.common.aws import s3 as s3_helpers
    from sagelaunch.jobspec.names import job_name
    from sagelaunch.launcher.sagemaker.backend import submit
    from sagelaunch.jobspec.spec import TrainingJobSpec, replace, spec_from_fields
    from sagelaunch.launcher.common.request import compile_create_training_job_request

    tmp = Path(tempfile.mkdtemp(prefix="bench-submit-"))
    src = tmp / "src"
    for i in range(40):
        (src / f"pkg{i % 4}").mkdir(parents=True, exist_ok=True)
        (src / f"pkg{i % 4}" / f"mod{i}.py").write_text("x = 1\n" * 200)
    (src / "train.py").write_text("print('train')\n")
    role = "arn:aws:iam::123456789012:role/SageMakerRole"
    image = "763104351884.dkr.ecr.us-west-2.amazonaws.com/pytorch-training:2.0.0-gpu-py310-cu118-ubuntu20.04-sagemaker"

    def spec(i: int) -> TrainingJobSpec:
        return spec_from_fields(job_name=job_name(f"bench-a{i}"), framework="pytorch", framework_version="2.0.0",
                               py_version="py310", image_uri=image, region="us-west-2", role=role,
                               entry_point="train.py", source_dir=str(src), instance_type="ml.p3.2xlarge")

    def ours(i: int) -> None:
        submit(spec(i), wait=False)

    sm, s3 = boto3.client("sagemaker"), boto3.client("s3")
    s3.create_bucket(Bucket="bench-bare", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})

    def bare(i: int) -> None:
        s = replace(spec(i), job_name=job_name(f"bench-b{i}"))
        archive = tmp / f"bare{i}.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(src, arcname=".")
        key = f"{s.job_name}/source/sourcedir.tar.gz"
        s3.put_object(Bucket="bench-bare", Key=key, Body=archive.read_bytes())
        request = compile_create_training_job_request(
            replace(s, submit_directory=f"s3://bench-bare/{key}", output_path="s3://bench-bare/"))
        sm.create_training_job(**request)

    ours(-1), bare(-1)  # warm both paths (imports, bucket creation, connections)
    a, b = _median_ms(ours, args.runs), _median_ms(bare, args.runs)
    print(f"submit, {args.runs} runs, median: sagelaunch {a:.1f} ms | bare boto3 {b:.1f} ms | ratio {a / b:.2f}x")

    big = tmp / "big.tar.gz"
    big.write_bytes(os.urandom(args.mb * 1024 * 1024))
    runs = max(3, args.runs // 5)
    multi = _median_ms(lambda i: s3_helpers.upload_file(big, f"s3://bench-bare/multi{i}.tar.gz"), runs)
    single = _median_ms(lambda i: s3.put_object(Bucket="bench-bare", Key=f"single{i}", Body=big.read_bytes()), runs)
    print(f"upload {args.mb} MiB, {runs} runs, median: multipart (8 MiB parts, 4 threads) {multi:.0f} ms | "
          f"single put_object {single:.0f} ms | ratio {multi / single:.2f}x")
    server.stop()


if __name__ == "__main__":
    main()
