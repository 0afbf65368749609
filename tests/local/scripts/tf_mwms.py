"""A tiny TF2 job under MultiWorkerMirroredStrategy (TF_CONFIG from the launcher): a linear model trained
with a custom loop whose gradients are all-reduced across the workers; the chief saves the weights."""
import json
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

strategy = tf.distribute.MultiWorkerMirroredStrategy()
task = json.loads(os.environ["TF_CONFIG"])["task"]
with strategy.scope():
    # MEAN aggregation: each step's update is averaged over the workers
    weights = tf.Variable(tf.zeros((4, 1)), aggregation=tf.VariableAggregation.MEAN)

rng = np.random.default_rng(task["index"])  # each worker its own data
x = rng.normal(size=(32, 4)).astype("float32")
y = x.sum(axis=1, keepdims=True)


@tf.function
def train_step(features, labels):
    def step(features, labels):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(features, weights) - labels))
        weights.assign_sub(0.1 * tape.gradient(loss, weights))
        return loss

    losses = strategy.run(step, args=(features, labels))
    return strategy.reduce(tf.distribute.ReduceOp.MEAN, losses, axis=None)


losses = [float(train_step(tf.constant(x), tf.constant(y))) for _ in range(3)]
report = {"workers": strategy.num_replicas_in_sync, "task": task, "losses": losses,
          "weights": weights.numpy().ravel().tolist()}
with open(os.path.join(os.environ["SM_OUTPUT_DATA_DIR"], "report.json"), "w") as handle:
    json.dump(report, handle)
if task["index"] == 0:
    np.save(os.path.join(os.environ["SM_MODEL_DIR"], "weights.npy"), weights.numpy())
print(f"worker {task['index']} of {strategy.num_replicas_in_sync} done")
