"""Pure functions the server and the command line share (hover, views, checks, quick fixes): no LSP handlers."""
