// NAN initialises a float array element.
sp a[n=2] = {1.0, NAN};
{ }
