"""``python -m biasamp``: the ``biasamp`` command line (``python -m biasamp demo``)."""

from biasamp.cli._commands import main

if __name__ == "__main__":
    main()
