//! The standard-ABI part of the build script: from the same function table,
//! the entry points of `libmpi_abi.so` (feature `standard-abi`), which take
//! the MPI 5.0 standard ABI's C types, convert at the boundary and call
//! oxmpi's own (unexported) entry points, and the header include/mpi_abi.h.
//!
//! Each parameter gets a conversion ([`Conv`]) chosen from its C type and
//! name: handles by value, pointers to one handle, status or constant
//! (converted in, passed as a local, converted back out), arrays of them
//! (through a temporary array written back), integer constants whose values
//! differ (a rank's `MPI_ANY_SOURCE`, a thread level, a combiner...),
//! `MPI_IN_PLACE` buffers, weights sentinels. A function with a parameter
//! the generator cannot convert is generated as a stub that reports
//! `MPI_ERR_UNSUPPORTED_OPERATION` ([`UNSUPPORTED`]), never as a silent
//! pass-through.
use std::fmt::Write as _;

use super::{exports, Export, Function, Kind, Param};

/// Functions exported but not converted yet (see the README's "Standard
/// ABI" section).
pub const UNSUPPORTED: &[&str] = &[];

/// The handle types, with the prefix of their conversion functions.
const HANDLES: &[(&str, &str)] = &[
    ("MPI_Comm", "comm"),
    ("MPI_Group", "group"),
    ("MPI_Datatype", "datatype"),
    ("MPI_Op", "op"),
    ("MPI_Errhandler", "errhandler"),
    ("MPI_Info", "info"),
    ("MPI_Win", "win"),
    ("MPI_File", "file"),
    ("MPI_Request", "request"),
    ("MPI_Message", "message"),
    ("MPI_Session", "session"),
];

fn handle_prefix(t: &str) -> Option<&'static str> {
    HANDLES.iter().find(|h| h.0 == t).map(|h| h.1)
}

/// Whether a function belongs to the standard ABI's library: MPICH's
/// `MPIX_` extensions and the Fortran interoperability functions (`MPI_Fint`,
/// replaced by `MPI_*_toint`/`_fromint` in the standard ABI) are left out.
pub fn in_standard_abi(f: &Function, export: &Export) -> bool {
    if f.name.starts_with("MPIX_") {
        return false;
    }
    let mut types: Vec<String> = f.params.iter().map(|p| export.c_type(p)).collect();
    types.push(f.ret.clone());
    !types
        .iter()
        .any(|t| t.contains("MPI_Fint") || t.contains("MPIX_") || t.contains("MPI_F08"))
}

/// How one parameter crosses the boundary.
enum Conv {
    /// The same C type in both ABIs.
    Pass,
    /// By value: `expr` (with `x`) gives oxmpi's value.
    Value(String),
    /// A pointer to one element (`many` = None) or to an array of `many`
    /// elements. `elem` is oxmpi's element type; `read` converts the
    /// program's element `x` in (None: a pure output, started at `init`);
    /// `write` converts oxmpi's `x` back out (None: an input);
    /// `ignore` is what oxmpi gets for the program's NULL.
    Ptr {
        elem: String,
        read: Option<String>,
        write: Option<String>,
        init: String,
        ignore: String,
        many: Option<String>,
        written: Option<String>,
    },
    /// Hand-written statements before and after the call and the argument.
    Custom {
        pre: String,
        arg: String,
        post: String,
    },
    Unsupported,
}

/// The oxmpi-side value group of an integer parameter, by name (and
/// function where a name means different things).
fn int_group(fname: &str, name: &str) -> Option<&'static str> {
    Some(match name {
        "source" | "dest" | "root" | "target_rank" | "rank" | "rank_source" | "rank_dest"
        | "ranks1" | "ranks2" => "Rank",
        "tag" | "recvtag" | "sendtag" => "Tag",
        "required" | "provided" => "Thread",
        "result" if fname.ends_with("_compare") => "Compare",
        "status" if fname == "MPI_Topo_test" => "Topo",
        "split_type" => "SplitType",
        "combiner" => "Combiner",
        "typeclass" => "Typeclass",
        "lock_type" => "Lock",
        "whence" => "Whence",
        "order" => "Order",
        "array_of_distribs" => "Distrib",
        "array_of_dargs" => "Darg",
        "keyval" | "comm_keyval" | "type_keyval" | "win_keyval" => "Keyval",
        "verbosity" => "Verbosity",
        "bind" => "Bind",
        "scope" => "Scope",
        "var_class" => "PvarClass",
        "cb_safety" => "CbSafety",
        "ordering" => "SourceOrder",
        _ => return None,
    })
}

fn int_conv(fname: &str, name: &str) -> Option<(String, String)> {
    if matches!(name, "errorcode" | "errorclass" | "array_of_errcodes") && fname != "MPI_Abort" {
        return Some(("cv::code_in(x)".into(), "cv::code_out(x)".into()));
    }
    if name == "amode" {
        return Some((
            "cv::mode_in(ModeGroup::File, x)".into(),
            "cv::mode_out(ModeGroup::File, x)".into(),
        ));
    }
    if name == "assert" {
        return Some((
            "cv::mode_in(ModeGroup::Win, x)".into(),
            "cv::mode_out(ModeGroup::Win, x)".into(),
        ));
    }
    let g = int_group(fname, name)?;
    Some((
        format!("cv::int_in(IntGroup::{g}, x)"),
        format!("cv::int_out(IntGroup::{g}, x)"),
    ))
}

/// Whether the program's value behind a `*mut` handle or int is read
/// (an in-out argument) or only written.
fn reads_in(fname: &str, name: &str) -> bool {
    const INOUT: &[&str] = &[
        "_free",
        "_close",
        "_finalize",
        "_disconnect",
        "_commit",
        "Wait",
        "Test",
        "Start",
        "Cancel",
        "Mrecv",
        "Imrecv",
        "_free_keyval",
        "Keyval_free",
    ];
    if name.starts_with("array_of_requests") {
        return true;
    }
    INOUT.iter().any(|k| fname.contains(k))
}

/// The length of an array parameter, as an expression over the (program's)
/// arguments, or None when the generator does not know it.
fn array_len(fname: &str, name: &str) -> Option<&'static str> {
    let base = fname.strip_suffix("_c").unwrap_or(fname);
    Some(match (base, name) {
        ("MPI_Waitall" | "MPI_Testall" | "MPI_Waitany" | "MPI_Testany" | "MPI_Startall", _) => {
            "count"
        }
        ("MPI_Waitsome" | "MPI_Testsome", _) => "incount",
        ("MPI_Type_create_struct" | "MPI_Type_struct", "array_of_types") => "count",
        ("MPI_Type_get_contents", "array_of_datatypes") => "max_datatypes",
        ("MPI_Type_get_contents", "array_of_integers") => "max_integers",
        ("MPI_Comm_spawn_multiple", "array_of_info") => "count",
        ("MPI_Comm_spawn", "array_of_errcodes") => "maxprocs",
        ("MPI_Comm_spawn_multiple", "array_of_errcodes") => {
            "{\n        // SAFETY: MPI's contract: `count` entries of maxprocs.\n        \
             unsafe { cv::sum_of(count, array_of_maxprocs) }\n    }"
        }
        ("MPI_Alltoallw" | "MPI_Ialltoallw" | "MPI_Alltoallw_init", "sendtypes" | "recvtypes") => {
            "cv::peers(comm)"
        }
        ("MPI_Group_translate_ranks", "ranks1" | "ranks2") => "n",
        (
            "MPI_Neighbor_alltoallw" | "MPI_Ineighbor_alltoallw" | "MPI_Neighbor_alltoallw_init",
            "sendtypes",
        ) => "cv::neighbor_degree(comm, true)",
        (
            "MPI_Neighbor_alltoallw" | "MPI_Ineighbor_alltoallw" | "MPI_Neighbor_alltoallw_init",
            "recvtypes",
        ) => "cv::neighbor_degree(comm, false)",
        ("MPI_Type_create_darray", "array_of_distribs" | "array_of_dargs") => "ndims",
        _ => return None,
    })
}

fn conv(f: &Function, export: &Export, p: &Param) -> Conv {
    let fname = export.name.as_str();
    let name = p.name.as_str();
    let ty = export.c_type(p);
    let is_out_kind = matches!(p.kind, Kind::Out(_));
    // Buffers: the standard's MPI_IN_PLACE (the address 1, never a buffer)
    // becomes oxmpi's, which then accepts it where MPI does and reports
    // MPI_ERR_BUFFER elsewhere.
    if (name.contains("buf") || name.ends_with("_addr")) && ty.ends_with("c_void") {
        let f = if ty.starts_with("*mut") {
            "buf_in_mut"
        } else {
            "buf_in"
        };
        return Conv::Value(format!("cv::{f}(x)"));
    }
    if matches!(name, "sourceweights" | "destweights" | "weights") {
        let e = if ty.starts_with("*const") {
            "cv::weights_in(x.cast_mut())"
        } else {
            "cv::weights_in(x)"
        };
        return Conv::Value(e.into());
    }
    if fname.starts_with("MPI_File_") && fname.contains("_view") && name == "disp" {
        return if ty == "MPI_Offset" {
            Conv::Value("cv::displacement_in(x)".into())
        } else {
            scalar_ptr(
                "MPI_Offset",
                None,
                Some("cv::displacement_out(x)".into()),
                "0",
            )
        };
    }
    if (fname == "MPI_Comm_idup" || fname == "MPI_Comm_idup_with_info") && name == "newcomm" {
        // oxmpi writes the new handle when the request completes, through
        // this pointer: it gets the program's pointer-sized slot, zeroed,
        // whose low half (little-endian) then holds the int handle, which
        // is the standard handle zero-extended.
        return Conv::Custom {
            pre: format!(
                "if !{name}.is_null() {{\n        \
                 // SAFETY: the program's output handle, valid for writes until the\n        \
                 // request completes (MPI's contract).\n        \
                 unsafe {{ *{name} = std::ptr::null_mut() }};\n    }}\n    "
            ),
            arg: format!("{name}.cast::<c_int>()"),
            post: String::new(),
        };
    }
    if fname == "MPI_T_event_get_info" && name == "array_of_datatypes" {
        // oxmpi reports no events, so every index is invalid and the array
        // is never written: oxmpi gets NULL, which it would refuse if it
        // ever had an event to describe (never a silent mix of handle
        // widths).
        return Conv::Custom {
            pre: format!("let _ = {name};\n    "),
            arg: "std::ptr::null_mut()".into(),
            post: String::new(),
        };
    }
    if name == "obj_handle" {
        return Conv::Custom {
            pre: format!(
                "let mut {name}_h: c_int = 0;\n    \
                 let {name}_a = cv::opaque_handle_in({name}, &mut {name}_h);\n    "
            ),
            arg: format!("{name}_a"),
            post: String::new(),
        };
    }
    if ty == "MPI_T_pvar_handle" {
        return Conv::Value("cv::pvar_handle_in(x)".into());
    }
    // Callbacks: stored as oxmpi's callback types and converted when called
    // (see `crate::std_abi` and the `standard-abi` code in the callers).
    if ty.ends_with("copy_attr_function") || ty == "MPI_Copy_function" {
        return Conv::Value(
            "cv::copy_fn_in(x, Some(crate::mpi_abi::data_symbols::MPIR_Dup_fn))".into(),
        );
    }
    // Handles by value.
    if let Some(h) = handle_prefix(&ty) {
        return Conv::Value(format!("cv::{h}_in(x)"));
    }
    // Pointers to handles.
    for (qual, konst) in [("*mut ", false), ("*const ", true)] {
        let Some(inner) = ty.strip_prefix(qual) else {
            continue;
        };
        if let Some(h) = handle_prefix(inner) {
            let many = name.starts_with("array_of_") || name.ends_with("types");
            let read = if konst || reads_in(fname, name) {
                Some(format!("cv::{h}_in(x)"))
            } else {
                None
            };
            let write = (!konst).then(|| format!("cv::{h}_out(x)"));
            // The value the local starts with, to tell whether oxmpi wrote
            // it: not one oxmpi writes (a file's MPI_FILE_NULL is the null
            // pointer, so a file handle starts as another value).
            let init = if h == "file" {
                "cv::file_unwritten()".to_string()
            } else {
                format!("cv::{h}_in(std::ptr::null_mut())")
            };
            let many = if many {
                match array_len(fname, name) {
                    Some(len) => Some(len.to_string()),
                    None => return Conv::Unsupported,
                }
            } else {
                None
            };
            return Conv::Ptr {
                elem: format!("m::{inner}"),
                read,
                write,
                init,
                ignore: "std::ptr::null_mut()".into(),
                many,
                written: None,
            };
        }
        if inner == "MPI_Status" {
            let many = name == "array_of_statuses";
            let status_functions = fname.starts_with("MPI_Status_set")
                || fname.starts_with("MPI_Get_count")
                || fname.starts_with("MPI_Get_elements")
                || fname == "MPI_Test_cancelled";
            let read = (konst || status_functions).then(|| "cv::status_in(&x)".to_string());
            let init = if read.is_some() {
                "m::MPI_Status::default()".to_string()
            } else {
                "cv::status_blank()".to_string()
            };
            let write = (!konst).then(|| "STORE:cv::status_store".to_string());
            let (many, written) = if many {
                let len = array_len(fname, "array_of_requests").map(str::to_string);
                let written = (fname.contains("some")).then(|| {
                    "if outcount.is_null() { 0 } else { \
                     // SAFETY: the program's outcount, just written by the call.\n        \
                     unsafe { *outcount } }"
                        .to_string()
                });
                match len {
                    Some(l) => (Some(l), written),
                    None => return Conv::Unsupported,
                }
            } else {
                (None, None)
            };
            let ignore = if konst {
                "std::ptr::null_mut()".to_string()
            } else {
                "cv::status_ignore()".to_string()
            };
            return Conv::Ptr {
                elem: "m::MPI_Status".into(),
                read,
                write,
                init,
                ignore,
                many,
                written,
            };
        }
        if inner == "c_int" {
            if let Some((cin, cout)) = int_conv(fname, name) {
                let many = if name.starts_with("array_of_") || name.starts_with("ranks") {
                    match array_len(fname, name) {
                        Some(l) => Some(l.to_string()),
                        None => return Conv::Unsupported,
                    }
                } else {
                    None
                };
                let read = (konst || reads_in(fname, name)).then_some(cin);
                let write = (!konst).then_some(cout);
                return Conv::Ptr {
                    elem: "c_int".into(),
                    read,
                    write,
                    init: "0".into(),
                    ignore: "std::ptr::null_mut()".into(),
                    many,
                    written: None,
                };
            }
        }
        if inner == "MPI_T_source_order" && name == "ordering" {
            return scalar_ptr(
                "MPI_T_source_order",
                None,
                Some("cv::int_out(IntGroup::SourceOrder, x)".into()),
                "0",
            );
        }
    }
    if ty == "c_int" || ty == "MPI_T_cb_safety" {
        if let Some((cin, _)) = int_conv(fname, name) {
            return Conv::Value(cin);
        }
    }
    let _ = (f, is_out_kind);
    if ty.contains("MPI_Status") || HANDLES.iter().any(|h| contains_word(&ty, h.0)) {
        return Conv::Unsupported;
    }
    Conv::Pass
}

fn scalar_ptr(elem: &str, read: Option<String>, write: Option<String>, init: &str) -> Conv {
    Conv::Ptr {
        elem: elem.into(),
        read,
        write,
        init: init.into(),
        ignore: "std::ptr::null_mut()".into(),
        many: None,
        written: None,
    }
}

fn contains_word(s: &str, word: &str) -> bool {
    s.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// A C type of the table written as the standard-ABI Rust type of the
/// generated entry point.
fn std_rust_type(t: &str) -> String {
    let mut out = Vec::new();
    for w in t.split(' ') {
        if handle_prefix(w).is_some() || w == "MPI_Status" {
            out.push(format!("s::{w}"));
        } else {
            out.push(w.to_string());
        }
    }
    out.join(" ")
}

/// The standard-ABI entry points (the generated module
/// `crate::std_abi::entry_points`) and the names of the unsupported ones.
pub fn generate_entry_points(functions: &[Function]) -> (String, Vec<String>) {
    let mut out = String::from(
        "// Generated by build.rs (build_std_abi.rs) from src/abi/mpi_functions.txt. Do not edit.\n\
         use std::os::raw::{c_char, c_int, c_void};\n\
         use crate::mpi_abi::types::*;\n\
         use crate::mpi_abi::callbacks::*;\n\
         use crate::mpi_abi::types as m;\n\
         use crate::mpi_abi::standard::types as s;\n\
         use crate::std_abi::support as cv;\n\
         use crate::mpi_abi::standard::values::{IntGroup, ModeGroup};\n\n",
    );
    let mut unsupported = Vec::new();
    for export in exports(functions) {
        let f = export.function;
        if !in_standard_abi(f, &export) {
            continue;
        }
        let name = &export.name;
        let base = name.strip_suffix("_c").unwrap_or(name);
        let convs: Vec<Conv> = f.params.iter().map(|p| conv(f, &export, p)).collect();
        let decl: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, std_rust_type(&export.c_type(p))))
            .collect();
        let decl = decl.join(", ");
        let forward: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
        let forward = forward.join(", ");
        let returns_code = f.ret == "c_int";
        let is_unsupported = UNSUPPORTED.contains(&base)
            || UNSUPPORTED.contains(&name.as_str())
            || convs.iter().any(|c| matches!(c, Conv::Unsupported));
        let body = if is_unsupported {
            unsupported.push(name.clone());
            assert!(returns_code, "{name}: unsupported but returns no code");
            format!("cv::code_out(crate::abi::boundary::unsupported_in_standard_abi(\"{name}\"))")
        } else {
            let mut pre = String::new();
            let mut post = String::new();
            let mut args = Vec::new();
            for (p, c) in f.params.iter().zip(&convs) {
                let n = &p.name;
                match c {
                    Conv::Pass => args.push(n.clone()),
                    Conv::Value(e) => {
                        let _ = write!(pre, "let {n} = {{ let x = {n}; {e} }};\n    ");
                        args.push(n.clone());
                    }
                    Conv::Custom {
                        pre: a,
                        arg,
                        post: b,
                    } => {
                        pre.push_str(a);
                        post.push_str(b);
                        args.push(arg.clone());
                    }
                    Conv::Ptr {
                        elem,
                        read,
                        write,
                        init,
                        ignore,
                        many,
                        written,
                    } => {
                        gen_ptr(
                            &mut pre, &mut post, n, elem, read, write, init, ignore, many, written,
                        );
                        args.push(format!("{n}_a"));
                    }
                    Conv::Unsupported => unreachable!(),
                }
            }
            let args = args.join(", ");
            let call = format!(
                "// SAFETY: the arguments are the program's, converted; valid as MPI\n    \
                 // requires for {name}.\n    \
                 let rc = unsafe {{ crate::abi::entry_points::P{name}({args}) }};\n    "
            );
            let special = special_post(name);
            if returns_code {
                format!("cv::guard(|| {{\n    {pre}{call}{post}{special}cv::code_out(rc)\n    }})")
            } else {
                format!("{pre}{call}{post}rc")
            }
        };
        let body = body.replace("\n    ", "\n        ");
        let unused = if is_unsupported && !f.params.is_empty() {
            "#[allow(unused_variables)]\n"
        } else {
            ""
        };
        let _ = write!(
            out,
            "#[no_mangle]\n{unused}pub unsafe extern \"C\" fn P{name}({decl}) -> {ret} {{\n    {body}\n}}\n\n\
             #[no_mangle]\npub unsafe extern \"C\" fn {name}({decl}) -> {ret} {{\n    \
             // SAFETY: the caller's arguments, passed on unchanged.\n    unsafe {{ P{name}({forward}) }}\n}}\n\n",
            ret = f.ret,
        );
    }
    let _ = writeln!(
        out,
        "/// Standard-ABI functions exported as stubs that report\n\
         /// `MPI_ERR_UNSUPPORTED_OPERATION`.\npub const UNSUPPORTED: &[&str] = &{unsupported:?};"
    );
    (out, unsupported)
}

/// Conversions after the call that depend on the function.
fn special_post(name: &str) -> &'static str {
    match name {
        "MPI_Win_get_attr" => {
            "// SAFETY: the program's attribute_val and flag, as MPI requires.\n    \
             unsafe { cv::win_attr_out(win_keyval, attribute_val, flag) };\n    "
        }
        "MPI_Comm_get_attr" => {
            "// SAFETY: the program's attribute_val and flag, as MPI requires.\n    \
             unsafe { cv::comm_attr_out(comm_keyval, attribute_val, flag) };\n    "
        }
        "MPI_Attr_get" => {
            "// SAFETY: the program's attribute_val and flag, as MPI requires.\n    \
             unsafe { cv::comm_attr_out(keyval, attribute_val, flag) };\n    "
        }
        "MPI_Type_get_contents" => {
            "// SAFETY: the program's integer array of max_integers entries.\n    \
             unsafe { cv::contents_out(datatype, i64::from(max_integers), array_of_integers, \
             crate::abi::count::Width::Int) };\n    "
        }
        "MPI_Type_get_contents_c" => {
            "// SAFETY: the program's integer array of max_integers entries.\n    \
             unsafe { cv::contents_out(datatype, max_integers, array_of_integers, \
             crate::abi::count::Width::Large) };\n    "
        }
        _ => "",
    }
}

#[allow(clippy::too_many_arguments)]
fn gen_ptr(
    pre: &mut String,
    post: &mut String,
    n: &str,
    elem: &str,
    read: &Option<String>,
    write: &Option<String>,
    init: &str,
    ignore: &str,
    many: &Option<String>,
    written: &Option<String>,
) {
    match many {
        None => {
            let start = match read {
                Some(r) => format!(
                    "if {n}.is_null() {{ {init} }} else {{\n        \
                     // SAFETY: the program's argument, non-NULL, valid for reads as MPI requires.\n        \
                     let x = unsafe {{ *{n} }};\n        {r}\n    }}"
                ),
                None => init.to_string(),
            };
            let _ = write!(
                pre,
                "#[allow(unused_mut)]\n    let mut {n}_v: {elem} = {start};\n    \
                 let {n}_a: *mut {elem} = if {n}.is_null() {{ {ignore} }} else {{ &mut {n}_v }};\n    "
            );
            if let Some(w) = write {
                let store = store_stmt(w, n);
                // A pure output handle is written only if oxmpi wrote it
                // (a failed call leaves the program's variable as it was).
                let unchanged =
                    if read.is_none() && elem.starts_with("m::MPI_") && elem != "m::MPI_Status" {
                        format!(" && {n}_v != {init}")
                    } else {
                        String::new()
                    };
                let _ = write!(
                    post,
                    "if !{n}.is_null(){unchanged} {{\n        let x = {n}_v;\n        \
                     // SAFETY: the program's output argument, non-NULL, valid for writes.\n        \
                     unsafe {{ {store} }};\n    }}\n    "
                );
            }
        }
        Some(len) => {
            let fill = match read {
                Some(r) => format!(
                    "(0..{n}_len).map(|i| {{\n        \
                     // SAFETY: element i < the array's length of the program's array.\n        \
                     let x = unsafe {{ *{n}.add(i) }};\n        {r}\n    }}).collect()"
                ),
                None => format!("(0..{n}_len).map(|_| {init}).collect()"),
            };
            let _ = write!(
                pre,
                "let {n}_len: usize = if {n}.is_null() {{ 0 }} else {{ usize::try_from({len}).unwrap_or(0) }};\n    \
                 #[allow(unused_mut)]\n    let mut {n}_v: Vec<{elem}> = {fill};\n    \
                 let {n}_a: *mut {elem} = if {n}.is_null() {{ {ignore} }} else {{ {n}_v.as_mut_ptr() }};\n    "
            );
            if let Some(w) = write {
                let count = match written {
                    Some(e) => format!("usize::try_from({e}).unwrap_or(0).min({n}_len)"),
                    None => format!("{n}_len"),
                };
                let store = store_stmt(w, &format!("{n}.add(i)"));
                let _ = write!(
                    post,
                    "for (i, &x) in {n}_v.iter().enumerate().take({count}) {{\n        \
                     // SAFETY: i < the length of the program's output array.\n        \
                     unsafe {{ {store} }};\n    }}\n    "
                );
            }
        }
    }
}

/// The statement that stores the converted `x` at `dst`: `write` is an
/// expression, or `STORE:f` for a function `f(dst, &x)` that stores it
/// (a status keeps fields oxmpi did not set).
fn store_stmt(write: &str, dst: &str) -> String {
    match write.strip_prefix("STORE:") {
        Some(f) => format!("{f}({dst}, &x)"),
        None => format!("*{dst} = {write}"),
    }
}

/// A table C type as C.
fn c_type(t: &str, callbacks: &[String]) -> String {
    let t = t.trim();
    if let Some(inner) = t.strip_prefix("*const ") {
        return format!("const {}*", c_type(inner, callbacks));
    }
    if let Some(inner) = t.strip_prefix("*mut ") {
        return format!("{}*", c_type(inner, callbacks));
    }
    match t {
        "c_int" => "int".into(),
        "c_char" => "char".into(),
        "c_void" => "void".into(),
        "f64" => "double".into(),
        other if callbacks.iter().any(|c| c == other) => format!("{other}*"),
        other => other.into(),
    }
}

fn c_param(p_name: &str, t: &str, callbacks: &[String]) -> String {
    if t == "*mut [c_int; 3]" {
        return format!("int {p_name}[][3]");
    }
    format!("{} {p_name}", c_type(t, callbacks))
}

/// One `(kind, "NAME", value, ...)` or `("NAME", value)` entry of
/// src/mpi_abi/standard/values.rs.
fn value_entries(values_rs: &str) -> Vec<(Option<String>, String, String)> {
    let mut out = Vec::new();
    for line in values_rs.lines() {
        let line = line.trim();
        assert!(
            line != "(",
            "src/mpi_abi/standard/values.rs: keep one entry per line (#[rustfmt::skip])"
        );
        let Some(inner) = line.strip_prefix('(').and_then(|l| l.strip_suffix("),")) else {
            continue;
        };
        let fields: Vec<&str> = inner.split(", ").map(str::trim).collect();
        match fields.as_slice() {
            [kind, name, value, _] => out.push((
                Some(kind.to_string()),
                name.trim_matches('"').to_string(),
                value.to_string(),
            )),
            [name, value] if name.starts_with('"') => {
                out.push((None, name.trim_matches('"').to_string(), value.to_string()))
            }
            _ => {}
        }
    }
    out
}

/// include/mpi_abi.h: types, constants from values.rs, callback typedefs,
/// then the prototypes of every standard-ABI function.
pub fn generate_header(
    functions: &[Function],
    values_rs: &str,
    callbacks_h: &str,
    callbacks: &[String],
    unsupported: &[String],
) -> String {
    let mut h = String::from(
        "/* Generated by oxmpi's build.rs (build_std_abi.rs) from src/mpi_abi/standard/values.rs and\n \
         * src/abi/mpi_functions.txt. Do not edit. */\n\
         /* oxmpi: MPI with the MPI 5.0 standard ABI (libmpi_abi.so.1). */\n\
         #ifndef MPI_H_ABI\n#define MPI_H_ABI\n#ifndef MPI_ABI_H_INCLUDED\n#define MPI_ABI_H_INCLUDED\n\n\
         #include <stdint.h>\n\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n\
         typedef intptr_t MPI_Aint;\ntypedef int64_t MPI_Offset;\ntypedef MPI_Offset MPI_Count;\n\n\
         typedef struct {\n    int MPI_SOURCE;\n    int MPI_TAG;\n    int MPI_ERROR;\n    int MPI_internal[5];\n} MPI_Status;\n\n",
    );
    let entries = value_entries(values_rs);
    for (ty, _) in HANDLES {
        let short = &ty[4..];
        let _ = writeln!(h, "typedef struct MPI_ABI_{short} *{ty};");
        for (kind, name, value) in &entries {
            if kind.as_deref() == Some(short) {
                let _ = writeln!(h, "#define {name:<30} (({ty}){value})");
            }
        }
        h.push('\n');
    }
    h.push_str(
        "#define MPI_LONG_LONG_INT MPI_LONG_LONG\n#define MPI_C_COMPLEX MPI_C_FLOAT_COMPLEX\n\n",
    );
    let mut last_group = String::new();
    let mut seen = std::collections::HashSet::new();
    h.push_str("enum {\n");
    for (kind, name, value) in &entries {
        let Some(kind) = kind else { continue };
        if HANDLES.iter().any(|(t, _)| &t[4..] == kind) || !seen.insert(name.clone()) {
            continue;
        }
        if *kind != last_group {
            let _ = writeln!(h, "    /* {kind} */");
            last_group = kind.clone();
        }
        let _ = writeln!(h, "    {name} = {value},");
    }
    h.push_str("    /* Other integer constants */\n");
    for (kind, name, value) in &entries {
        if kind.is_none() && !name.starts_with("MPI_VERSION") && !name.contains("VERSION") {
            let _ = writeln!(h, "    {name} = {value},");
        }
    }
    h.push_str("    MPI_ABI_ENUM_END_ = 0\n};\n\n");
    for (kind, name, value) in &entries {
        if kind.is_none() && name.contains("VERSION") {
            let _ = writeln!(h, "#define {name} {value}");
        }
    }
    h.push_str(
        "\n/* Pointer-valued constants */\n\
         #define MPI_BOTTOM ((void *)0)\n#define MPI_IN_PLACE ((void *)1)\n#define MPI_BUFFER_AUTOMATIC ((void *)2)\n\
         #define MPI_ARGV_NULL ((char **)0)\n#define MPI_ARGVS_NULL ((char ***)0)\n\
         #define MPI_ERRCODES_IGNORE ((int *)0)\n#define MPI_STATUS_IGNORE ((MPI_Status *)0)\n\
         #define MPI_STATUSES_IGNORE ((MPI_Status *)0)\n#define MPI_UNWEIGHTED ((int *)10)\n\
         #define MPI_WEIGHTS_EMPTY ((int *)11)\n#define MPI_DISPLACEMENT_CURRENT ((MPI_Offset)-1)\n\n\
         /* MPI_T handles */\n\
         typedef struct MPI_T_enum_t *MPI_T_enum;\ntypedef struct MPI_T_cvar_handle_t *MPI_T_cvar_handle;\n\
         typedef struct MPI_T_pvar_handle_t *MPI_T_pvar_handle;\ntypedef struct MPI_T_pvar_session_t *MPI_T_pvar_session;\n\
         typedef struct MPI_T_event_registration_t *MPI_T_event_registration;\n\
         typedef struct MPI_T_event_instance_t *MPI_T_event_instance;\n\
         typedef int MPI_T_cb_safety;\ntypedef int MPI_T_source_order;\n\
         #define MPI_T_ENUM_NULL ((MPI_T_enum)0)\n#define MPI_T_CVAR_HANDLE_NULL ((MPI_T_cvar_handle)0)\n\
         #define MPI_T_PVAR_SESSION_NULL ((MPI_T_pvar_session)0)\n#define MPI_T_PVAR_HANDLE_NULL ((MPI_T_pvar_handle)0)\n\
         #define MPI_T_PVAR_ALL_HANDLES ((MPI_T_pvar_handle)1)\n\n",
    );
    h.push_str(callbacks_h);
    h.push_str(
        "\n/* Predefined attribute and conversion callbacks */\n\
         #define MPI_NULL_COPY_FN ((MPI_Copy_function *)0)\n#define MPI_DUP_FN ((MPI_Copy_function *)1)\n\
         #define MPI_NULL_DELETE_FN ((MPI_Delete_function *)0)\n\
         #define MPI_COMM_NULL_COPY_FN ((MPI_Comm_copy_attr_function *)0)\n\
         #define MPI_COMM_DUP_FN ((MPI_Comm_copy_attr_function *)1)\n\
         #define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)\n\
         #define MPI_TYPE_NULL_COPY_FN ((MPI_Type_copy_attr_function *)0)\n\
         #define MPI_TYPE_DUP_FN ((MPI_Type_copy_attr_function *)1)\n\
         #define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)\n\
         #define MPI_WIN_NULL_COPY_FN ((MPI_Win_copy_attr_function *)0)\n\
         #define MPI_WIN_DUP_FN ((MPI_Win_copy_attr_function *)1)\n\
         #define MPI_WIN_NULL_DELETE_FN ((MPI_Win_delete_attr_function *)0)\n\
         #define MPI_CONVERSION_FN_NULL ((MPI_Datarep_conversion_function *)0)\n\
         #define MPI_CONVERSION_FN_NULL_C ((MPI_Datarep_conversion_function_c *)0)\n",
    );
    h.push_str("\n/* Functions */\n");
    for export in exports(functions) {
        let f = export.function;
        if !in_standard_abi(f, &export) {
            continue;
        }
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| c_param(&p.name, &export.c_type(p), callbacks))
            .collect();
        let mut params = if params.is_empty() {
            "void".to_string()
        } else {
            params.join(", ")
        };
        if f.variadic {
            params.push_str(", ...");
        }
        let ret = c_type(&f.ret, callbacks);
        let note = if unsupported.contains(&export.name) {
            " /* not supported in oxmpi's standard ABI build yet */"
        } else {
            ""
        };
        for prefix in ["", "P"] {
            let _ = writeln!(h, "{ret} {prefix}{}({params});{note}", export.name);
        }
    }
    h.push_str(EXTRA_PROTOTYPES);
    h.push_str("\n#ifdef __cplusplus\n}\n#endif\n\n#endif /* MPI_ABI_H_INCLUDED */\n#endif /* MPI_H_ABI */\n");
    h
}

/// The functions new in the standard ABI, written by hand in
/// src/std_abi/functions.rs.
const EXTRA_PROTOTYPES: &str = "\n/* New in the standard ABI (src/std_abi/functions.rs) */\n\
int MPI_Abi_get_version(int *abi_major, int *abi_minor);\n\
int PMPI_Abi_get_version(int *abi_major, int *abi_minor);\n\
int MPI_Abi_get_info(MPI_Info *info);\n\
int PMPI_Abi_get_info(MPI_Info *info);\n\
int MPI_Abi_get_fortran_info(MPI_Info *info);\n\
int PMPI_Abi_get_fortran_info(MPI_Info *info);\n\
int MPI_Status_get_source(const MPI_Status *status, int *source);\n\
int PMPI_Status_get_source(const MPI_Status *status, int *source);\n\
int MPI_Status_get_tag(const MPI_Status *status, int *tag);\n\
int PMPI_Status_get_tag(const MPI_Status *status, int *tag);\n\
int MPI_Status_get_error(const MPI_Status *status, int *error);\n\
int PMPI_Status_get_error(const MPI_Status *status, int *error);\n\
int MPI_Status_set_source(MPI_Status *status, int source);\n\
int PMPI_Status_set_source(MPI_Status *status, int source);\n\
int MPI_Status_set_tag(MPI_Status *status, int tag);\n\
int PMPI_Status_set_tag(MPI_Status *status, int tag);\n\
int MPI_Status_set_error(MPI_Status *status, int error);\n\
int PMPI_Status_set_error(MPI_Status *status, int error);\n\
#define OXMPI_ABI_HANDLE_CONVERSIONS(T, t) \\\n    int MPI_##t##_toint(MPI_##T h); int PMPI_##t##_toint(MPI_##T h); \\\n    MPI_##T MPI_##t##_fromint(int i); MPI_##T PMPI_##t##_fromint(int i);\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Comm, Comm)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Errhandler, Errhandler)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(File, File)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Group, Group)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Info, Info)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Message, Message)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Op, Op)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Request, Request)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Session, Session)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Datatype, Type)\n\
OXMPI_ABI_HANDLE_CONVERSIONS(Win, Win)\n\
#undef OXMPI_ABI_HANDLE_CONVERSIONS\n";
