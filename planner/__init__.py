"""Will it fit? The planner: a model-parallel job's memory per GPU, speed and cost, before launch."""
