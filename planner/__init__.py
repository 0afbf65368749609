"""Will it fit? The planner: a model-parallel job's memory per GPU, speed and cost, before launch.

    from sagelaunch.planner import Layout, model_from_config, plan, search
    result = plan(model_from_config("config.json", seq_len=512), Layout(tp=8, shard_optimizer_state=True),
                  "ml.p4d.24xlarge", 16, global_batch=64)

Torch is not imported here; model_from_builder imports it when called (the meta device).
"""

from sagelaunch.planner.layout import Layout
from sagelaunch.planner.meta_build import model_from_builder
from sagelaunch.planner.models import model_from_config, model_from_dims
from sagelaunch.planner.plan import Plan, lower_bound, plan, smallest_changes
from sagelaunch.planner.search import SearchResult, search
from sagelaunch.planner.shape import ModelShape

__all__ = ["Layout", "ModelShape", "Plan", "SearchResult", "lower_bound", "model_from_builder", "model_from_config",
           "model_from_dims", "plan", "search", "smallest_changes"]
