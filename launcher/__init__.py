"""sagelaunch launcher: the job spec, the places a job runs, and the `sagelaunch` CLI."""
