"""The ``biodivergence`` command line, the top layer: it names and imports the modules of every layer below
(contract, text rules, builder, trainer) that serve its subcommands; nothing imports it."""
