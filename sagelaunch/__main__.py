"""`python -m sagelaunch …`: the same command as `sagelaunch …`."""

from sagelaunch.cli import main

if __name__ == "__main__":
    main()
