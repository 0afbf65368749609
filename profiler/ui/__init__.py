"""The profile browser (`sagelaunch profile ui`): job sources, the loaded-profile session, the HTTP server."""
