"""``python -m w2v``: the same as the ``w2v`` command."""

from w2v.cli import main

if __name__ == "__main__":
    main()
