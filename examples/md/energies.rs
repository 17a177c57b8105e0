//! Energy tables (`step potential kinetic total`, tab-separated) and the check used by
//! `mdlj --check`: max|ΔE| / (1 + max|ref|) ≤ tolerance, per column.

/// The energy check against a reference table (`mdlj --check`, and the Tungsten form's
/// `mdlj-tables check-energies`): the largest [`compare`] value a column may have.
pub const REFERENCE_LIMIT: f64 = 1e-5;

/// One row of an energy table.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EnergyRow {
    /// Timestep.
    pub step: u64,
    /// Potential energy.
    pub potential: f64,
    /// Kinetic energy.
    pub kinetic: f64,
    /// Total energy.
    pub total: f64,
}

/// Parses a table with a header line.
pub fn parse(text: &str) -> Result<Vec<EnergyRow>, String> {
    let mut rows = Vec::new();
    for (n, line) in text.lines().enumerate().skip(1) {
        if line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split_whitespace().collect();
        let [s, p, k, t] = f[..] else {
            return Err(format!("line {}: expected 4 columns", n + 1));
        };
        let num = |v: &str| {
            v.parse::<f64>()
                .map_err(|_| format!("line {}: bad number `{v}`", n + 1))
        };
        rows.push(EnergyRow {
            step: s
                .parse()
                .map_err(|_| format!("line {}: bad step `{s}`", n + 1))?,
            potential: num(p)?,
            kinetic: num(k)?,
            total: num(t)?,
        });
    }
    Ok(rows)
}

/// Writes a table with a header line.
pub fn write(rows: &[EnergyRow]) -> String {
    let mut s = String::from("step\tpotential\tkinetic\ttotal\n");
    for r in rows {
        s.push_str(&format!(
            "{}\t{:.10}\t{:.10}\t{:.10}\n",
            r.step, r.potential, r.kinetic, r.total
        ));
    }
    s
}

/// The worst relative error per column: max|Δ| / (1 + max|ref|) for potential, kinetic
/// and total. Errors if the tables differ in length or steps, or a value is not finite.
pub fn compare(got: &[EnergyRow], reference: &[EnergyRow]) -> Result<[f64; 3], String> {
    if got.len() != reference.len() {
        return Err(format!(
            "{} rows, the reference has {}",
            got.len(),
            reference.len()
        ));
    }
    let mut worst = [0.0f64; 3];
    let mut scale = [0.0f64; 3];
    for (g, r) in got.iter().zip(reference) {
        if g.step != r.step {
            return Err(format!(
                "step {} where the reference has step {}",
                g.step, r.step
            ));
        }
        let gv = [g.potential, g.kinetic, g.total];
        let rv = [r.potential, r.kinetic, r.total];
        for k in 0..3 {
            if !gv[k].is_finite() {
                return Err(format!("step {}: a non-finite energy", g.step));
            }
            worst[k] = worst[k].max((gv[k] - rv[k]).abs());
            scale[k] = scale[k].max(rv[k].abs());
        }
    }
    Ok([
        worst[0] / (1.0 + scale[0]),
        worst[1] / (1.0 + scale[1]),
        worst[2] / (1.0 + scale[2]),
    ])
}
