// Tungsten half of the saxpy pair (layout.csl is the CSL half): y = a * x + y over 16
// elements; the last loop is one DSD operation.
sp x[n=16];
sp y[n=16];

{
  let i in [0, 16);
  ∀i x[i] = 0.5 * (sp)i;
  ∀i y[i] = 1.0 + (sp)i;
  sp a = 3.0;
  ∀i y[i] = x[i] * a + y[i];
}
