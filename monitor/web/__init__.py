"""The browser pages: ``rankwatch serve`` (paste or drop logs, read the diagnosis) and the
daemon's live incidents page at ``/``. Pages and scripts are package data served locally;
nothing is fetched from elsewhere and nothing a user sends is written to disk."""
