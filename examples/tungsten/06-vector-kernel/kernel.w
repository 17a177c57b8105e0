// Tutorial 6: vector kernels with `∀`. On every tile of a row:
//   y <- A*x + y                       (axpy)
//   p <- C0 + x*(C1 + x*(C2 + x*C3))   (a cubic, by Horner's rule)
// With SCALAR = 0 each `∀` statement is one DSD operation over all L elements; with
// SCALAR = 1 the same arithmetic runs as ordinary loops, one element per iteration.
xp param L = 64;                 // elements per tile
xp param SCALAR = 0;             // 1: the scalar-loop version, for comparison
sp param A = 2.5;
sp param C0 = 1.0;
sp param C1 = -0.5;
sp param C2 = 0.25;
sp param C3 = 2.0;

sp x[L];                         // inputs (miset)
sp y[L];                         // input and output
sp p[L];                         // output

{
  if (SCALAR == 0) {
    let i in [0, L);
    ∀i y[i] = A * x[i] + y[i];   // fmacs: one fused multiply-add per element
    ∀i p[i] = x[i] * C3;         // fmuls
    ∀i p[i] = p[i] + C2;         // fadds
    ∀i p[i] = p[i] * x[i];       // fmuls
    ∀i p[i] = p[i] + C1;         // fadds
    ∀i p[i] = p[i] * x[i];       // fmuls
    ∀i p[i] = p[i] + C0;         // fadds
  } else {
    xp n = L;                    // a bound in a variable: an ordinary loop
    i in [0, n) {
      y[i] = A * x[i] + y[i];
      sp t = x[i] * C3 + C2;
      t = t * x[i] + C1;
      p[i] = t * x[i] + C0;
    }
  }
}
