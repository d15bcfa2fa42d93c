//! Error codes and user-defined error classes.
//!
//! A code is `class | index << 14`: its low 14 bits are the class, so
//! `MPI_Error_class` is a mask, and a predefined class is its own code.
//! Index 1..=RING_LAST names a recent error with its specific message (kept
//! in a ring of `RING_SIZE`; an evicted code still gives its class's text);
//! indexes above `RING_LAST` are codes added by `MPI_Add_error_code`.
//! Every code stays below `MPI_ERR_LASTCODE`.
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::LazyLock;

use crate::core::locks::{Level, OrderedGuard, OrderedMutex};

use super::error::{class_text, is_predefined_class, MpiError};
use crate::mpi_abi::constants::*;

const CLASS_BITS: u32 = 14;
const CLASS_MASK: c_int = (1 << CLASS_BITS) - 1;
const RING_SIZE: usize = 256;
const RING_LAST: c_int = 0x7fff;
/// User-defined classes start here (above every MPICH and MPIX class).
pub const FIRST_USER_CLASS: c_int = 128;

struct Registry {
    ring: Vec<Option<(c_int, String)>>,
    next_ring_index: c_int,
    user_classes: c_int,
    user_codes: Vec<c_int>,
    strings: HashMap<c_int, String>,
}

static REGISTRY: LazyLock<OrderedMutex<Registry>> = LazyLock::new(|| {
    OrderedMutex::new(
        Level::ErrorCodes,
        Registry {
            ring: vec![None; RING_SIZE],
            next_ring_index: 1,
            user_classes: 0,
            user_codes: Vec::new(),
            strings: HashMap::new(),
        },
    )
});

fn registry() -> OrderedGuard<'static, Registry> {
    REGISTRY.lock()
}

/// Records a raised error and returns the code that names it.
pub fn record(call: &str, error: &MpiError) -> c_int {
    let mut reg = registry();
    let index = reg.next_ring_index;
    reg.next_ring_index = if index >= RING_LAST { 1 } else { index + 1 };
    let code = (error.class & CLASS_MASK) | (index << CLASS_BITS);
    let text = format!(
        "{call}: {} ({})",
        error.detail,
        class_label(&reg, error.class)
    );
    reg.ring[index as usize % RING_SIZE] = Some((code, text));
    code
}

/// `MPI_ERR_RANK`, or a user class's string (or number).
fn class_label(reg: &Registry, class: c_int) -> String {
    if class >= FIRST_USER_CLASS {
        return reg
            .strings
            .get(&class)
            .cloned()
            .unwrap_or_else(|| format!("error class {class}"));
    }
    super::error::class_name(class).to_string()
}

fn class_text_or_user(reg: &Registry, class: c_int) -> String {
    if let Some(s) = reg.strings.get(&class) {
        return s.clone();
    }
    format!(
        "{} ({})",
        class_text(class),
        super::error::class_name(class)
    )
}

/// The class of a code, or None when the code is not valid.
pub fn class_of(code: c_int) -> Option<c_int> {
    if !(0..=MPI_ERR_LASTCODE).contains(&code) {
        return None;
    }
    let class = code & CLASS_MASK;
    let index = code >> CLASS_BITS;
    let reg = registry();
    let class_ok = is_predefined_class(class)
        || (class >= FIRST_USER_CLASS && class < FIRST_USER_CLASS + reg.user_classes);
    let index_ok = index <= RING_LAST || reg.user_codes.contains(&code);
    (class_ok && index_ok).then_some(class)
}

/// The text for a code: its specific message when it is still known,
/// otherwise the class's text.
pub fn string_of(code: c_int) -> Option<String> {
    let class = class_of(code)?;
    let reg = registry();
    if let Some(s) = reg.strings.get(&code) {
        return Some(s.clone());
    }
    let index = code >> CLASS_BITS;
    if (1..=RING_LAST).contains(&index) {
        if let Some((c, text)) = &reg.ring[index as usize % RING_SIZE] {
            if *c == code {
                return Some(text.clone());
            }
        }
    }
    if class >= FIRST_USER_CLASS {
        return Some(reg.strings.get(&class).cloned().unwrap_or_default());
    }
    Some(class_text_or_user(&reg, class))
}

/// `MPI_Add_error_class`.
pub fn add_class() -> Result<c_int, MpiError> {
    let mut reg = registry();
    if FIRST_USER_CLASS + reg.user_classes > CLASS_MASK {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "no more error classes can be added",
        ));
    }
    let class = FIRST_USER_CLASS + reg.user_classes;
    reg.user_classes += 1;
    Ok(class)
}

/// `MPI_Add_error_code`.
pub fn add_code(class: c_int) -> Result<c_int, MpiError> {
    let mut reg = registry();
    let valid = is_predefined_class(class)
        || (class >= FIRST_USER_CLASS && class < FIRST_USER_CLASS + reg.user_classes);
    if !valid {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{class} is not a valid error class"),
        ));
    }
    let index = RING_LAST + 1 + reg.user_codes.len() as c_int;
    if index >= 1 << (31 - CLASS_BITS - 1) {
        return Err(MpiError::new(
            MPI_ERR_OTHER,
            "no more error codes can be added",
        ));
    }
    let code = class | (index << CLASS_BITS);
    reg.user_codes.push(code);
    Ok(code)
}

/// `MPI_Add_error_string`: only user-defined classes and codes take one.
pub fn add_string(code: c_int, text: String) -> Result<(), MpiError> {
    let user_class = {
        let reg = registry();
        code >= FIRST_USER_CLASS && code < FIRST_USER_CLASS + reg.user_classes
    };
    let user_code = registry().user_codes.contains(&code);
    if !user_class && !user_code {
        return Err(MpiError::new(
            MPI_ERR_ARG,
            format!("{code} is not a user-defined error class or code"),
        ));
    }
    registry().strings.insert(code, text);
    Ok(())
}

/// The largest code or class in use (the `MPI_LASTUSEDCODE` attribute).
pub fn last_used_code() -> c_int {
    let reg = registry();
    let last_class = FIRST_USER_CLASS + reg.user_classes - 1;
    reg.user_codes
        .iter()
        .copied()
        .max()
        .unwrap_or(0)
        .max(last_class)
        .max(MPICH_ERR_LAST_MPIX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recorded_code_keeps_class_and_message() {
        let code = record(
            "MPI_Send",
            &MpiError::new(MPI_ERR_RANK, "rank 7 is not in 0..4"),
        );
        assert_ne!(code, MPI_ERR_RANK);
        assert_eq!(class_of(code), Some(MPI_ERR_RANK));
        let text = string_of(code).unwrap();
        assert!(
            text.contains("MPI_Send") && text.contains("rank 7"),
            "{text}"
        );
        assert_eq!(class_of(MPI_ERR_COMM), Some(MPI_ERR_COMM));
        assert!(code <= MPI_ERR_LASTCODE);
    }

    #[test]
    fn user_classes_codes_and_strings() {
        let class = add_class().unwrap();
        assert!(class >= FIRST_USER_CLASS);
        let code = add_code(class).unwrap();
        assert_eq!(class_of(code), Some(class));
        add_string(code, "my error".into()).unwrap();
        assert_eq!(string_of(code).unwrap(), "my error");
        assert!(add_string(MPI_ERR_COMM, "nope".into()).is_err());
        assert!(add_code(9999).is_err());
        assert!(last_used_code() >= code);
        assert_eq!(class_of(-5), None);
    }

    #[test]
    fn evicted_ring_entries_fall_back_to_the_class_text() {
        let first = record("MPI_Recv", &MpiError::new(MPI_ERR_TAG, "bad tag"));
        for _ in 0..RING_SIZE {
            record("MPI_Recv", &MpiError::new(MPI_ERR_COUNT, "x"));
        }
        let text = string_of(first).unwrap();
        assert!(
            text.contains("MPI_ERR_TAG") && !text.contains("bad tag"),
            "{text}"
        );
    }
}
