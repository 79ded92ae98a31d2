"""``python -m biasamp.cli``: the command line."""

from biasamp.cli._commands import main

if __name__ == "__main__":
    main()
