"""A display-only stand-in for matplotlib, on the notebook runs' sys.path after everything else (an installed
matplotlib wins): the AWS notebooks plot the images they send, and neither test environment installs matplotlib.
Plotting draws nothing here; the notebook's data flow is untouched."""
