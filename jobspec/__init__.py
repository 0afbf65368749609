"""jobspec: what the client and the job agree on — the neutral leaf every other package may import.

- `sagelaunch.jobspec.spec`: TrainingJobSpec (the one typed job description), its parts, and `replace` (validated copies);
- `sagelaunch.jobspec.catalog` (+ support_matrix.json): images, regions, instance types, GPUs, what supports what;
- `sagelaunch.jobspec.smp`: the SMP v1 parameter model, its world/placement rules, and what sagelaunch's
  implementation does not do;
- `sagelaunch.jobspec.contract`, `sagelaunch.jobspec.profiling`, `sagelaunch.jobspec.names`, `sagelaunch.jobspec.s3uri`: the container contract's
  vocabulary (SM_* names, /opt/ml paths, statuses, profilerconfig.json, job names, S3 URIs);
- `sagelaunch.jobspec.suggest`, `sagelaunch.jobspec.errors`, `sagelaunch.jobspec.net`: error wording and a free port.

Imports only the standard library and pydantic; nothing here reads the environment or the network.
Importing the package imports none of its modules.
"""
