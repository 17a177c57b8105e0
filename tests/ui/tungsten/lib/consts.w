// A library file for import_ok.w.
xp param LIMIT = 10;
twice(xp a) -> xp { return 2 * a; }
