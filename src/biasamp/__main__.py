"""``python -m biasamp``: the ``biasamp`` command line (``python -m biasamp demo``)."""

from .cli import main

if __name__ == "__main__":
    main()
