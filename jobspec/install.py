"""Where sagelaunch is installed, for the PYTHONPATH of the processes it starts (a job's ranks, its helper and server
processes): they import `sagelaunch.<name>` too.

The paths are deliberately not resolved: in a source checkout `sagelaunch/<name>` links to the design's folder at the
repository root, and the package is the folder that holds those links; in an installed wheel it is site-packages'."""

from __future__ import annotations

from pathlib import Path

PACKAGE_DIR = Path(__file__).parents[1]  # …/sagelaunch
INSTALL_ROOT = PACKAGE_DIR.parent  # the folder a process needs on its path to import sagelaunch
