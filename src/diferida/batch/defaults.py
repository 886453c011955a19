"""Defaults that the command line shows in its help, kept in a module of their
own so that `diferida batch --help` needs no Polars."""

DEFAULT_CHUNK_ROWS = 250_000  # ~0.5 GB of working memory in the core, the fastest size measured
