//! The ISA table (`csl_arch::for_each_op!`) and its users: every opcode is either selected
//! by the compiler's code generation or listed here as simulator-only, and the simulator
//! executes every one (a table test: each opcode once, with all-zero operands, as the
//! first instruction of a task on a hand-built one-PE image).

use csl_arch::fabric::Arch;
use csl_arch::image::{
    ClassInfo, FuncInfo, Image, Meta, ProgramClass, TaskBinding, TaskKind, WaveletArgs,
};
use csl_arch::isa::{Op, decode_all};

macro_rules! op_names {
    ($( $(#[$attr:meta])* $snake:ident = $Name:ident { $($field:ident : $fty:ident),* } ;)*) => {
        &[ $( (stringify!($snake), stringify!($Name)) ),* ]
    };
}

/// Every opcode: (mnemonic, `Op` variant), in encoding order.
const OPS: &[(&str, &str)] = csl_arch::for_each_op!(op_names);

/// Opcodes that code generation never selects: hand-written images and the simulator's
/// own tests use them.
const SIMULATOR_ONLY: &[&str] = &["Nop"];

#[test]
fn every_opcode_is_selected_by_codegen_or_listed_as_simulator_only() {
    let root = csl_tests::repo_root();
    let codegen =
        std::fs::read_to_string(root.join("compiler/src/codegen/mod.rs")).expect("read codegen");
    let selected = |name: &str| {
        let pat = format!("Op::{name}");
        codegen.match_indices(&pat).any(|(i, _)| {
            !codegen[i + pat.len()..]
                .chars()
                .next()
                .is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
    };
    let mut neither = Vec::new();
    let mut both = Vec::new();
    for (_, name) in OPS {
        match (selected(name), SIMULATOR_ONLY.contains(name)) {
            (false, false) => neither.push(*name),
            (true, true) => both.push(*name),
            _ => {}
        }
    }
    assert!(
        neither.is_empty(),
        "opcodes neither selected by codegen nor listed as simulator-only: {neither:?}"
    );
    assert!(
        both.is_empty(),
        "opcodes listed as simulator-only that codegen selects: {both:?}"
    );
    for name in SIMULATOR_ONLY {
        assert!(OPS.iter().any(|(_, n)| n == name), "`{name}` is no opcode");
    }
}

/// The opcode with encoding `index`, all operands zero (register 0, value 0, the first
/// value of every operand enum). Opcode 0 is `nop`, which has no operands, so the zero
/// bytes after the operands decode as `nop`s.
fn zero_operands(index: usize) -> Op {
    let mut bytes = vec![index as u8];
    bytes.resize(64, 0);
    let ops = decode_all(&bytes).expect("decode");
    ops[0]
}

/// A one-PE image whose task 0 (initially active) runs `op` and returns.
fn one_op_image(op: Op) -> Image {
    let class = ProgramClass {
        code: vec![op, Op::RetVoid {}],
        data: Vec::new(),
        info: ClassInfo {
            name: "t".into(),
            functions: vec![FuncInfo {
                name: "main".into(),
                entry: 0,
                nregs: 8,
                nparams: 0,
                frame_bytes: 0,
            }],
            tasks: vec![TaskBinding {
                id: 0,
                kind: TaskKind::Local,
                func: 0,
                args: WaveletArgs::None,
            }],
            initially_active: 1,
            ..ClassInfo::default()
        },
        lines: Default::default(),
    };
    Image {
        meta: Meta::rect(Arch::Wse2, 1, 1),
        placement: vec![0],
        routes: Default::default(),
        exports: vec![],
        classes: vec![class],
        tile_memory: Vec::new(),
    }
}

#[test]
fn the_simulator_executes_every_opcode() {
    for (index, (mnemonic, _)) in OPS.iter().enumerate() {
        let op = zero_operands(index);
        assert_eq!(op.mnemonic(), *mnemonic);
        let img = one_op_image(op);
        let mut sim = cslsim::Simulator::new(&img)
            .unwrap_or_else(|e| panic!("`{mnemonic}`: the image does not load: {e}"));
        // A typed fault (a call with no function, a trap, a loop that never ends) is an
        // execution too; what must not happen is a panic.
        let _ = sim.run_until_idle(10_000);
        assert!(sim.cycle() > 0, "`{mnemonic}` never ran");
    }
}
