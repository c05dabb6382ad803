"""`python -m groupctl` runs the same command as the `groupctl` console script."""

from groupctl.cli.main import main

if __name__ == "__main__":
    main()
