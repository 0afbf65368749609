"""What create_model takes from a trained estimator, as v2 does: its job, its code, its VPC settings."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sagelaunch.estimators.arguments import EstimatorArguments
from sagelaunch.estimators.code_files import entry_in_source_dir
from sagelaunch.jobspec.errors import SagelaunchError

if TYPE_CHECKING:
    from sagelaunch.launcher import TrainingJob

VPC_CONFIG_DEFAULT = "VPC_CONFIG_DEFAULT"  # v2's sentinel: the estimator's own subnets and security groups


def vpc_config_of(estimator: EstimatorArguments, override: Any = VPC_CONFIG_DEFAULT) -> dict[str, list[str]] | None:
    """v2's get_vpc_config: the estimator's subnets + security groups (both, or none), or the override."""
    if override != VPC_CONFIG_DEFAULT:
        if override is None:
            return None
        return {"Subnets": list(override["Subnets"]), "SecurityGroupIds": list(override["SecurityGroupIds"])}
    if estimator.subnets and estimator.security_group_ids:
        return {"Subnets": list(estimator.subnets), "SecurityGroupIds": list(estimator.security_group_ids)}
    return None


def training_code_of(estimator: EstimatorArguments, job: TrainingJob) -> tuple[str | None, str | None]:
    """(entry_point, source_dir) v2 gives the model of a trained estimator: a SageMaker job's uploaded
    sourcedir.tar.gz and script name (from its hyperparameters); a local job's own files."""
    if getattr(job, "backend", "local") == "local":
        if estimator.source_dir is None:
            return estimator.entry_point, None
        return entry_in_source_dir(estimator.entry_point, estimator.source_dir), estimator.source_dir
    hyperparameters = job.describe().get("HyperParameters", {})
    try:
        source = json.loads(hyperparameters["sagemaker_submit_directory"])
        program = json.loads(hyperparameters["sagemaker_program"])
    except (KeyError, ValueError):
        return estimator.entry_point, estimator.source_dir
    return program, source


def trained_job_of(job: TrainingJob | None) -> TrainingJob:
    """An estimator's latest job, refused when there is none or it ended without a trained model."""
    if job is None:
        raise SagelaunchError("deploy() / create_model() need a trained model: call fit() first (latest_training_job is "
                              "None), or build PyTorchModel(model_data='s3://…/model.tar.gz', …) yourself",
                              field="latest_training_job", value=None, allowed="a trained job",
                              fix="call fit() first, or build PyTorchModel(model_data=…) yourself")
    if getattr(job, "backend", None) == "local":  # free to ask: a failed job's archive holds no trained model
        description = job.describe()
        status = description.get("TrainingJobStatus")
        if status in ("Failed", "Stopped"):
            fix = "fix the training job and fit() again (its logs: sagelaunch jobs logs " + job.name + ")"
            raise SagelaunchError(f"training job {job.name} ended {status}"
                                  f"{': ' + description['FailureReason'] if description.get('FailureReason') else ''};"
                                  f" it has no trained model to deploy or transform. Fix: {fix}",
                                  field="latest_training_job", value=job.name, allowed="a Completed job", fix=fix)
    return job


def trained_model_data(job: TrainingJob) -> str:
    """The model.tar.gz a finished training job left, for its Model; refused while it has none."""
    data = job.model_data
    if not isinstance(data, str):
        fix = "wait for the job to complete (job.wait()), then create the model"
        raise SagelaunchError(f"training job {job.name} has no model artifact yet; {fix}", field="latest_training_job",
                              value=job.name, allowed="a completed training job", fix=fix)
    return data
