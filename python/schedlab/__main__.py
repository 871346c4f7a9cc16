"""``python -m schedlab`` is the ``schedlab`` command."""

from schedlab.cli import main

if __name__ == "__main__":
    main()
