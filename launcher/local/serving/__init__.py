"""Local endpoints: the model server (the PyTorch toolkit's handlers, TF Serving's REST shapes), its lifetime
and the registry `sagelaunch endpoints` reads."""
