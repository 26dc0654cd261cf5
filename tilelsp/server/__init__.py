"""The language server: the pygls server object, its handlers, the check children and the lowering worker."""
