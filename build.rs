//! Build script: turns the MPI function table (`src/abi/mpi_functions.txt`)
//! into the `MPI_x`/`PMPI_x` entry points, then has cbindgen write
//! `include/mpi.h` from the Rust types, constants and those entry points.
//!
//! One line of the table declares one MPI function, or two: a name ending
//! in `[_c]` declares the function and its large-count twin (`MPI_Send` and
//! `MPI_Send_c`), whose C types differ only where a parameter's kind says.
//!
//! ```text
//! MPI_Comm_rank(comm: MPI_Comm, rank: out c_int) -> c_int = comm::rank
//! MPI_Send[_c](buf: *const c_void, count: count, datatype: MPI_Datatype, dest: c_int, tag: tag, comm: MPI_Comm) -> c_int = p2p::send
//! ```
//!
//! A parameter is a C type (`c_int`, a typedef of `src/mpi_abi`, `*const
//! T`...), passed to the implementation as it is, or a *kind*, which says
//! its C type in each form, the check the entry point makes and the value
//! the implementation gets (see [`Kind`]): `count`, `large_int`, `displ`,
//! `aint`, `*const count`, `*const displ`, `*const aint`, `*mut count`,
//! `*mut aint`, `*mut displ`, `user_function`, `datarep_conversion`, `tag`,
//! `any_tag`, and `out T` (a required output argument). Checks run in
//! parameter order before the implementation; checks that need an object
//! (a rank against its communicator, a handle) are the implementation's.
//!
//! The part after `=` names the implementation under `crate::abi` (one
//! function for both forms of a twin); `+width` after it passes the form
//! (`count::Width::Int` or `Large`) as a first argument. A line without
//! `=` becomes a stub that reports "not implemented" through the error
//! handler. Every generated function gets panic containment and
//! error-handler dispatch from `crate::abi::boundary`, and its `PMPI_`
//! twin.
//!
//! With the cargo feature `standard-abi` the same table makes the MPI 5.0
//! standard ABI's library (build_std_abi.rs): oxmpi's entry points are
//! then generated unexported (`PMPI_x` only, called by the standard-ABI
//! entry points, which convert the arguments), the SONAME is
//! `libmpi_abi.so.1` and include/mpi.h is left as it is. Both builds write
//! include/mpi_abi.h.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "build_std_abi.rs"]
mod std_abi;

/// What the table says about a parameter beyond a plain C type.
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    /// A C type, passed as it is.
    Plain(String),
    /// A count that is significant in every call: `int`, `MPI_Count` in
    /// the twin; checked non-negative (`MPI_ERR_COUNT`), passed as `usize`.
    Count,
    /// `int`, `MPI_Count` in the twin, passed as `i64` unchecked: a count
    /// significant only in some calls (a non-root's receive count, a send
    /// count with `MPI_IN_PLACE`), which the implementation checks where it
    /// matters, or a signed quantity (a stride).
    LargeInt,
    /// `int`, `MPI_Aint` in the twin, passed as `MPI_Aint`.
    Displ,
    /// `MPI_Aint`, `MPI_Count` in the twin (one Rust type).
    Aint,
    /// An array of counts: `count::Counts`.
    ConstCount,
    /// An array of displacements: `count::Displs`.
    ConstDispl,
    /// `*const MPI_Aint`, `*const MPI_Count` in the twin.
    ConstAint,
    /// `*mut c_int`, `*mut MPI_Count` in the twin, passed as it is (the
    /// implementation is generic over `count::CountOut`).
    MutCount,
    /// `*mut MPI_Aint`, `*mut MPI_Count` in the twin.
    MutAint,
    /// `*mut c_int`, `*mut MPI_Aint` in the twin.
    MutDispl,
    /// `MPI_User_function`, `MPI_User_function_c` in the twin.
    UserFunction,
    /// `MPI_Datarep_conversion_function`, `..._c` in the twin.
    DatarepConversion,
    /// A send's tag: `0..=MPI_TAG_UB` (`MPI_ERR_TAG`).
    Tag,
    /// A receive's tag: also `MPI_ANY_TAG`.
    AnyTag,
    /// A required output argument: NULL is `MPI_ERR_ARG`; passed as
    /// `&mut T`.
    Out(Box<Kind>),
}

impl Kind {
    fn parse(text: &str) -> Kind {
        let text = text.trim();
        if let Some(inner) = text.strip_prefix("out ") {
            return Kind::Out(Box::new(Kind::parse(inner)));
        }
        match text {
            "count" => Kind::Count,
            "large_int" => Kind::LargeInt,
            "displ" => Kind::Displ,
            "aint" => Kind::Aint,
            "*const count" => Kind::ConstCount,
            "*const displ" => Kind::ConstDispl,
            "*const aint" => Kind::ConstAint,
            "*mut count" => Kind::MutCount,
            "*mut aint" => Kind::MutAint,
            "*mut displ" => Kind::MutDispl,
            "user_function" => Kind::UserFunction,
            "datarep_conversion" => Kind::DatarepConversion,
            "tag" => Kind::Tag,
            "any_tag" => Kind::AnyTag,
            other => Kind::Plain(other.to_string()),
        }
    }

    /// The C type (as Rust) in the classic form and in the large twin.
    fn c_types(&self) -> (String, String) {
        let same = |t: &str| (t.to_string(), t.to_string());
        let pair = |a: &str, b: &str| (a.to_string(), b.to_string());
        match self {
            Kind::Plain(t) => same(t),
            Kind::Count | Kind::LargeInt => pair("c_int", "MPI_Count"),
            Kind::Displ => pair("c_int", "MPI_Aint"),
            Kind::Aint => pair("MPI_Aint", "MPI_Count"),
            Kind::ConstCount => pair("*const c_int", "*const MPI_Count"),
            Kind::ConstDispl => pair("*const c_int", "*const MPI_Aint"),
            Kind::ConstAint => pair("*const MPI_Aint", "*const MPI_Count"),
            Kind::MutCount => pair("*mut c_int", "*mut MPI_Count"),
            Kind::MutAint => pair("*mut MPI_Aint", "*mut MPI_Count"),
            Kind::MutDispl => pair("*mut c_int", "*mut MPI_Aint"),
            Kind::UserFunction => pair("MPI_User_function", "MPI_User_function_c"),
            Kind::DatarepConversion => pair(
                "MPI_Datarep_conversion_function",
                "MPI_Datarep_conversion_function_c",
            ),
            Kind::Tag | Kind::AnyTag => same("c_int"),
            Kind::Out(inner) => {
                let (a, b) = inner.c_types();
                (format!("*mut {a}"), format!("*mut {b}"))
            }
        }
    }

    /// Whether the two forms differ in this parameter.
    fn varies(&self) -> bool {
        let (a, b) = self.c_types();
        a != b
    }

    /// The statement that checks or converts argument `name` before the
    /// call in the classic or the `large` form (empty when it is passed as
    /// it is).
    fn prepare(&self, name: &str, large: bool) -> String {
        let converted = match self {
            Kind::Count => format!("crate::abi::count::checked({name}, \"{name}\")?"),
            // (`MPI_Count` and `MPI_Aint` are `i64` already.)
            Kind::LargeInt | Kind::Displ if large => return String::new(),
            Kind::LargeInt => format!("i64::from({name})"),
            Kind::Displ => format!("MPI_Aint::from({name})"),
            Kind::ConstCount => format!("crate::abi::count::Counts::from({name})"),
            Kind::ConstDispl => format!("crate::abi::count::Displs::from({name})"),
            Kind::Tag => format!("crate::abi::args::tag({name}, \"{name}\")?"),
            Kind::AnyTag => format!("crate::abi::args::any_tag({name}, \"{name}\")?"),
            Kind::Out(_) => {
                return format!(
                    "\n        // SAFETY: `{name}` is the caller's output argument, NULL (refused\n        \
                     // here) or valid for writes for the call, as MPI requires.\n        \
                     let {name} = unsafe {{ crate::abi::args::out({name}, \"{name}\") }}?;"
                )
            }
            _ => return String::new(),
        };
        format!("\n        let {name} = {converted};")
    }
}

struct Param {
    name: String,
    kind: Kind,
}

struct Function {
    name: String,
    params: Vec<Param>,
    variadic: bool,
    ret: String,
    implementation: Option<String>,
    /// Pass the form (`count::Width`) as a first argument.
    pass_width: bool,
    /// Declared with `[_c]`: also generate the large-count twin.
    has_twin: bool,
}

/// One exported function: a table entry in one of its forms.
struct Export<'a> {
    function: &'a Function,
    name: String,
    large: bool,
}

impl Export<'_> {
    fn c_type(&self, p: &Param) -> String {
        let (classic, large) = p.kind.c_types();
        if self.large {
            large
        } else {
            classic
        }
    }
}

fn parse_table(text: &str) -> Vec<Function> {
    let mut functions = Vec::new();
    for (lineno, raw) in text.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fail = |what: &str| -> ! { panic!("mpi_functions.txt:{}: {what}: {line}", lineno + 1) };
        let open = line.find('(').unwrap_or_else(|| fail("missing '('"));
        let close = line.rfind(')').unwrap_or_else(|| fail("missing ')'"));
        let declared = line[..open].trim();
        let (name, has_twin) = match declared.strip_suffix("[_c]") {
            Some(base) => (base.to_string(), true),
            None => (declared.to_string(), false),
        };
        let rest = line[close + 1..].trim();
        let rest = rest
            .strip_prefix("->")
            .unwrap_or_else(|| fail("missing '-> type'"));
        let (ret, implementation) = match rest.split_once('=') {
            Some((ret, path)) => (ret.trim().to_string(), Some(path.trim().to_string())),
            None => (rest.trim().to_string(), None),
        };
        let (implementation, pass_width) = match implementation {
            Some(path) => match path.strip_suffix("+width") {
                Some(path) => (Some(path.trim().to_string()), true),
                None => (Some(path), false),
            },
            None => (None, false),
        };
        let mut params = Vec::new();
        let mut variadic = false;
        let inner = &line[open + 1..close];
        for part in split_params(inner) {
            let part = part.trim();
            if part.is_empty() {
                continue;
            }
            if part == "..." {
                variadic = true;
                continue;
            }
            let (pname, ty) = part
                .split_once(':')
                .unwrap_or_else(|| fail("parameter without ': type'"));
            params.push(Param {
                name: pname.trim().to_string(),
                kind: Kind::parse(ty),
            });
        }
        let function = Function {
            name,
            params,
            variadic,
            ret,
            implementation,
            pass_width,
            has_twin,
        };
        // (A kind with a large form in an entry without a twin takes its
        // classic form: the deprecated `MPI_Type_hvector`, say.)
        if has_twin && !function.params.iter().any(|p| p.kind.varies()) {
            fail("[_c] but no parameter differs in the large form");
        }
        if function.ret != "c_int"
            && function
                .params
                .iter()
                .any(|p| !p.kind.prepare(&p.name, false).is_empty())
        {
            fail("a function that returns no error code cannot check arguments");
        }
        functions.push(function);
    }
    functions
}

/// Splits a parameter list on the commas that are not inside `[...]`.
fn split_params(s: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut current = String::new();
    for c in s.chars() {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(std::mem::take(&mut current));
                continue;
            }
            _ => {}
        }
        current.push(c);
    }
    parts.push(current);
    parts
}

/// Every exported form of every entry.
fn exports(functions: &[Function]) -> Vec<Export<'_>> {
    let mut out = Vec::new();
    for f in functions {
        out.push(Export {
            function: f,
            name: f.name.clone(),
            large: false,
        });
        if f.has_twin {
            out.push(Export {
                function: f,
                name: format!("{}_c", f.name),
                large: true,
            });
        }
    }
    out
}

/// Which object's error handler an error in this function goes to: the
/// first communicator, window, file or session argument, or the one whose
/// address a freeing call takes (`MPI_Comm_free(&comm)`: read before the
/// call). Returns the statement that computes `scope`.
fn error_scope(f: &Function) -> String {
    let ty = |p: &Param| match &p.kind {
        Kind::Plain(t) => t.clone(),
        Kind::Out(inner) => match &**inner {
            Kind::Plain(t) => format!("*mut {t}"),
            _ => String::new(),
        },
        _ => String::new(),
    };
    let scope = |expr: String| format!("let scope = {expr};\n    ");
    // MPI_Session_init's errors go to the handler it is given.
    if let Some(p) = f.params.iter().find(|p| ty(p) == "MPI_Errhandler") {
        if f.name == "MPI_Session_init" {
            return scope(format!("Scope::Handler({})", p.name));
        }
    }
    // Errors of opening or deleting a file go to MPI_FILE_NULL's handler.
    if f.name == "MPI_File_open" || f.name == "MPI_File_delete" {
        return scope("Scope::File(std::ptr::null_mut())".to_string());
    }
    for p in &f.params {
        let name = &p.name;
        let at = |object: &str, reader: &str| {
            format!(
                "// SAFETY: `{name}` is the caller's `{object} *`, valid or NULL as MPI\n    \
                 // requires; it is read now, before the call.\n    \
                 let scope = unsafe {{ Scope::{reader}({name}) }};\n    "
            )
        };
        return match ty(p).as_str() {
            "MPI_Comm" => scope(format!("Scope::Comm({name})")),
            "MPI_Win" => scope(format!("Scope::Win({name})")),
            "MPI_File" => scope(format!("Scope::File({name})")),
            "MPI_Session" => scope(format!("Scope::Session({name})")),
            "*mut MPI_Comm" if name == "comm" => at("MPI_Comm", "comm_at"),
            "*mut MPI_Session" if name == "session" => at("MPI_Session", "session_at"),
            "*mut MPI_Win" if name == "win" => at("MPI_Win", "win_at"),
            "*mut MPI_File" if name == "fh" => at("MPI_File", "file_at"),
            _ => continue,
        };
    }
    scope("Scope::Default".to_string())
}

/// oxmpi's entry points; `exported` = false (the standard-ABI build) makes
/// only the unexported `PMPI_x` that the standard-ABI entry points call.
/// QMPI's function numbers (src/abi/qmpi_functions.txt): each name in
/// the enum's order, upper-cased with `_T`.
fn parse_qmpi_numbers(text: &str) -> Vec<String> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_string)
        .collect()
}

/// The QMPI number of an exported function, if it has one.
fn qmpi_number(numbers: &[String], name: &str) -> Option<usize> {
    let key = format!("{}_T", name.to_uppercase());
    numbers.iter().position(|n| *n == key)
}

fn generate_entry_points(functions: &[Function], exported: bool, qmpi: &[String]) -> String {
    let mut out = String::new();
    out.push_str(
        "// Generated by build.rs from src/abi/mpi_functions.txt. Do not edit.\n\
         use std::os::raw::{c_char, c_int, c_void};\n\
         use crate::mpi_abi::types::*;\n\
         use crate::mpi_abi::callbacks::*;\n\
         use crate::abi::boundary::{self, Scope};\n\n",
    );
    let mut implemented = Vec::new();
    let mut missing = Vec::new();
    let mut own = String::new();
    for export in exports(functions) {
        let f = export.function;
        let name = &export.name;
        let pname = format!("P{name}");
        let decl_params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, export.c_type(p)))
            .collect();
        let decl_params = decl_params.join(", ");
        let forward: Vec<&str> = f.params.iter().map(|p| p.name.as_str()).collect();
        let forward = forward.join(", ");
        let prepare: String = f
            .params
            .iter()
            .map(|p| p.kind.prepare(&p.name, export.large))
            .collect();
        let mut args: Vec<String> = f.params.iter().map(|p| p.name.clone()).collect();
        if f.pass_width {
            let width = if export.large { "Large" } else { "Int" };
            args.insert(0, format!("crate::abi::count::Width::{width}"));
        }
        let args = args.join(", ");
        let is_tool_interface = name.starts_with("MPI_T_");
        let returns_code = f.ret == "c_int";
        let call = |path: &str| {
            format!(
                "{{{prepare}\n        // SAFETY: the arguments are the C caller's, valid as MPI requires for\n        \
                 // {name}, which is the implementation's contract.\n        \
                 unsafe {{ crate::abi::{path}({args}) }}\n    }}"
            )
        };
        let body = match (&f.implementation, returns_code) {
            (Some(path), true) if is_tool_interface => {
                implemented.push(name.clone());
                format!("boundary::run_tool(\"{name}\", || {})", call(path))
            }
            (Some(path), true) => {
                implemented.push(name.clone());
                format!(
                    "{}boundary::run(scope, \"{name}\", || {})",
                    error_scope(f),
                    call(path)
                )
            }
            (Some(path), false) => {
                implemented.push(name.clone());
                format!("boundary::run_value(\"{name}\", || {})", call(path))
            }
            (None, true) if is_tool_interface => {
                missing.push(name.clone());
                format!("boundary::tool_not_implemented(\"{name}\")")
            }
            (None, true) => {
                missing.push(name.clone());
                format!(
                    "{}boundary::not_implemented(scope, \"{name}\")",
                    error_scope(f)
                )
            }
            (None, false) => {
                missing.push(name.clone());
                format!("boundary::not_implemented_value(\"{name}\")")
            }
        };
        let unused = if f.implementation.is_none() && !f.params.is_empty() {
            "#[allow(unused_variables)]\n"
        } else {
            ""
        };
        let variadic_note = if f.variadic {
            "/// Variadic in C; the extra arguments are ignored.\n"
        } else {
            ""
        };
        if !exported {
            let _ = write!(
                out,
                "{unused}#[allow(dead_code)]\npub unsafe extern \"C\" fn {pname}({decl_params}) -> {ret} {{\n    {body}\n}}\n\n",
                ret = f.ret,
            );
            continue;
        }
        let _ = write!(
            out,
            "{variadic_note}#[no_mangle]\n{unused}pub unsafe extern \"C\" fn {pname}({decl_params}) -> {ret} {{\n    {body}\n}}\n\n",
            ret = f.ret,
        );
        // The MPI_ entry point goes to the first QMPI tool that intercepts
        // the function, if any (see abi::qmpi); QMPI_ is the library's own
        // function, the end of the tools' chain. A variadic function's
        // extra arguments cannot be passed on: it has no QMPI form.
        let number = qmpi_number(qmpi, name).filter(|_| !f.variadic);
        let Some(number) = number else {
            let _ = write!(
                out,
                "{variadic_note}#[no_mangle]\npub unsafe extern \"C\" fn {name}({decl_params}) -> {ret} {{\n    \
                 // SAFETY: the caller's arguments, passed on unchanged.\n    unsafe {{ {pname}({forward}) }}\n}}\n\n",
                ret = f.ret,
            );
            continue;
        };
        let types: Vec<String> = f.params.iter().map(|p| export.c_type(p)).collect();
        let fn_type = format!(
            "unsafe extern \"C\" fn(QMPI_Context, c_int{}{}) -> {}",
            if types.is_empty() { "" } else { ", " },
            types.join(", "),
            f.ret
        );
        let qname = format!("Q{name}");
        let comma = if forward.is_empty() { "" } else { ", " };
        let _ = write!(
            out,
            "#[no_mangle]\npub unsafe extern \"C\" fn {name}({decl_params}) -> {ret} {{\n    \
             if let Some((f, tool_id)) = crate::abi::qmpi::interceptor({number}) {{\n        \
             // SAFETY: the tool registered `f` for {name} (QMPI number {number}), so under\n        \
             // QMPI's contract it has {qname}_t's type.\n        \
             let f = unsafe {{ std::mem::transmute::<unsafe extern \"C\" fn(), {fn_type}>(f) }};\n        \
             // SAFETY: the caller's arguments, passed on unchanged to the tool.\n        \
             return unsafe {{ f(crate::abi::qmpi::context(), tool_id{comma}{forward}) }};\n    }}\n    \
             // SAFETY: the caller's arguments, passed on unchanged.\n    unsafe {{ {pname}({forward}) }}\n}}\n\n\
             /// {name} itself, for QMPI tools: the end of their chain.\n\
             #[no_mangle]\npub unsafe extern \"C\" fn {qname}(context: QMPI_Context, tool_id: c_int{comma}{decl_params}) -> {ret} {{\n    \
             let _ = (context, tool_id);\n    \
             // SAFETY: the caller's arguments, passed on unchanged.\n    unsafe {{ {pname}({forward}) }}\n}}\n\n",
            ret = f.ret,
        );
        let _ = writeln!(
            own,
            "        {number} => std::mem::transmute::<{fn_type}, unsafe extern \"C\" fn()>({qname}),"
        );
    }
    if exported {
        let _ = write!(
            out,
            "/// The library's own function of QMPI number `number` (its `QMPI_`\n\
             /// form), as QMPI hands out function pointers; `None` for a number\n\
             /// out of range or a function without a QMPI form.\n\
             pub fn qmpi_own_function(number: usize) -> Option<unsafe extern \"C\" fn()> {{\n    \
             // SAFETY: only the type of the pointer changes; whoever calls it\n    \
             // casts it back to the function's QMPI type (QMPI's contract).\n    \
             Some(unsafe {{\n        match number {{\n{own}            _ => return None,\n        }}\n    }})\n}}\n\n\
             /// How many function numbers QMPI has (`MPI_LAST_FUNC_T`).\n\
             pub const QMPI_FUNCTIONS: usize = {};\n\n",
            qmpi.len()
        );
    }
    let _ = writeln!(
        out,
        "/// MPI functions oxmpi implements.\npub const IMPLEMENTED: &[&str] = &{implemented:?};\n\
         /// MPI functions that are exported but report \"not implemented\".\n\
         pub const NOT_IMPLEMENTED: &[&str] = &{missing:?};"
    );
    out
}

/// QMPI's declarations that are not a generated function's prototype:
/// the function numbers (a C enum, as MPICH declares it) and the calls
/// that register and look up tools (src/abi/qmpi.rs).
fn qmpi_declarations(numbers: &[String]) -> String {
    let mut out = String::from(
        "/* QMPI (MPICH's interface for chaining tools; see oxmpi's src/abi/qmpi.rs): the function\n \
         * numbers, in MPICH 4.0.2's order, and the registration calls. */\n\
         enum QMPI_Functions_enum {\n",
    );
    for n in numbers {
        let _ = writeln!(out, "    {n},");
    }
    out.push_str(
        "    MPI_LAST_FUNC_T\n};\n\n\
         #ifdef __cplusplus\nextern \"C\" {\n#endif\n\
         int QMPI_Register_tool_name(const char *tool_name, void (*init_function_ptr)(int tool_id));\n\
         int QMPI_Register_tool_storage(int tool_id, void *tool_storage);\n\
         int QMPI_Register_function(int calling_tool_id, enum QMPI_Functions_enum function_enum,\n    \
         void (*function_ptr)(void));\n\
         int QMPI_Get_function(int calling_tool_id, enum QMPI_Functions_enum function_enum,\n    \
         void (**function_ptr)(void), int *next_tool_id);\n\
         int QMPI_Get_tool_storage(QMPI_Context context, int tool_id, void **storage);\n\
         int QMPI_Get_calling_address(QMPI_Context context, void **address);\n\
         #ifdef __cplusplus\n}\n#endif\n\n",
    );
    out
}

/// `QMPI_x_t`, the type of each generated `QMPI_x` function (a function
/// type, as in MPICH: tools declare `QMPI_Send_t *next`), made from its
/// prototype in the header and placed after the prototypes.
fn add_qmpi_function_types(header: &str) -> String {
    let mut types =
        String::from("\n/* The QMPI function types: QMPI_x_t is the type of QMPI_x. */\n");
    let mut rest = header;
    const REGISTRATION: [&str; 6] = [
        "QMPI_Register_tool_name",
        "QMPI_Register_tool_storage",
        "QMPI_Register_function",
        "QMPI_Get_function",
        "QMPI_Get_tool_storage",
        "QMPI_Get_calling_address",
    ];
    while let Some(at) = rest.find("QMPI") {
        let line_start = rest[..at].rfind('\n').map_or(0, |i| i + 1);
        let before = &rest[line_start..at];
        let name_end = rest[at..]
            .find('(')
            .map(|i| at + i)
            .filter(|&e| rest[at..e].chars().all(|c| c.is_alphanumeric() || c == '_'));
        // A prototype: the return type alone before the name, at the start
        // of its line.
        let is_prototype = !before.is_empty()
            && !before.starts_with(' ')
            && before.split_whitespace().count() >= 1
            && !before.contains('(')
            && !before.starts_with("typedef")
            && !before.starts_with('#');
        let (Some(name_end), true) = (name_end, is_prototype) else {
            rest = &rest[at + 4..];
            continue;
        };
        let end = rest[name_end..].find(");").expect("prototype ends") + name_end;
        let name = &rest[at..name_end];
        let params = rest[name_end + 1..end]
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        if REGISTRATION.contains(&name) {
            rest = &rest[end..];
            continue;
        }
        let _ = writeln!(types, "typedef {}({name}_t)({params});", before);
        rest = &rest[end..];
    }
    let marker = "#ifdef __cplusplus\n}  // extern \"C\"";
    let at = header
        .rfind(marker)
        .expect("cbindgen output closes the extern \"C\" block");
    format!("{}{}\n{}", &header[..at], types, &header[at..])
}

/// cbindgen puts `after_includes` before the typedefs; the callback
/// typedefs need the handle types, so they go right before the prototypes.
fn insert_before_prototypes(header: &str, block: &str) -> String {
    let marker = "#ifdef __cplusplus\nextern \"C\" {";
    let at = header
        .find(marker)
        .expect("cbindgen output has the extern \"C\" block");
    format!("{}{}\n{}", &header[..at], block, &header[at..])
}

/// cbindgen writes `#define MPI_ANY_SOURCE -2` and `#define MPI_COMM_WORLD
/// 1140850688`; C wants negative values in parentheses, and handle
/// constants typed as MPICH types them (`((MPI_Comm)1140850688)`).
fn shape_defines(header: &str, constants_rs: &str) -> String {
    let mut types = std::collections::HashMap::new();
    for line in constants_rs.lines() {
        if let Some(rest) = line.trim().strip_prefix("pub const ") {
            if let Some((name, rest)) = rest.split_once(':') {
                let ty = rest.split('=').next().unwrap_or("").trim();
                types.insert(name.trim().to_string(), ty.to_string());
            }
        }
    }
    let mut out = String::with_capacity(header.len() + 4096);
    for line in header.lines() {
        let shaped = line.strip_prefix("#define ").and_then(|rest| {
            let (name, value) = rest.split_once(' ')?;
            let ty = types.get(name)?;
            if value.starts_with('"') {
                return None;
            }
            let value = value.strip_prefix(&format!("({ty})")).unwrap_or(value);
            if ty.starts_with("MPI") {
                Some(format!("#define {name} (({ty}){value})"))
            } else if value.starts_with('-') {
                Some(format!("#define {name} ({value})"))
            } else {
                None
            }
        });
        out.push_str(shaped.as_deref().unwrap_or(line));
        out.push('\n');
    }
    out
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let abi = root.join("src/abi");
    let vocabulary = root.join("src/mpi_abi");
    println!("cargo:rerun-if-changed=src/abi/mpi_functions.txt");
    for f in [
        "types.rs",
        "constants.rs",
        "callbacks.rs",
        "callbacks.h",
        "mpi_trailer.h",
    ] {
        println!("cargo:rerun-if-changed=src/mpi_abi/{f}");
    }
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=build_std_abi.rs");
    println!("cargo:rerun-if-changed=src/mpi_abi/standard/values.rs");
    let standard_abi = std::env::var_os("CARGO_FEATURE_STANDARD_ABI").is_some();
    // The C library's SONAME: programs linked against oxmpi (or MPICH)
    // record libmpi.so.12 and find either library; the standard-ABI
    // library is libmpi_abi.so.1, as MPICH's (libtool version 1:0:0).
    let soname = if standard_abi {
        "libmpi_abi.so.1"
    } else {
        "libmpi.so.12"
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");

    let table = std::fs::read_to_string(abi.join("mpi_functions.txt")).unwrap();
    let functions = parse_table(&table);
    let qmpi =
        parse_qmpi_numbers(&std::fs::read_to_string(abi.join("qmpi_functions.txt")).unwrap());
    let entry_points = out_dir.join("entry_points.rs");
    write_if_changed(
        &entry_points,
        &generate_entry_points(&functions, !standard_abi, &qmpi),
    );

    // The standard ABI: its entry points (used by the feature's build
    // only) and its header (written by both builds, so it stays current).
    let (std_entry_points, unsupported) = std_abi::generate_entry_points(&functions);
    write_if_changed(&out_dir.join("std_entry_points.rs"), &std_entry_points);
    let mut callback_names = Vec::new();
    let callbacks_rs_text = std::fs::read_to_string(vocabulary.join("callbacks.rs")).unwrap();
    for line in callbacks_rs_text.lines() {
        if let Some(rest) = line.trim().strip_prefix("pub type ") {
            callback_names.push(
                rest.split(['=', ' ', '<'])
                    .next()
                    .unwrap()
                    .trim()
                    .to_string(),
            );
        }
    }
    let std_header = std_abi::generate_header(
        &functions,
        &std::fs::read_to_string(vocabulary.join("standard/values.rs")).unwrap(),
        &std::fs::read_to_string(vocabulary.join("callbacks.h")).unwrap(),
        &callback_names,
        &unsupported,
    );
    write_if_changed(&root.join("include/mpi_abi.h"), &std_header);
    if standard_abi {
        return;
    }

    let mut config = cbindgen::Config::from_file(root.join("cbindgen.toml")).unwrap();
    let callbacks_rs = std::fs::read_to_string(vocabulary.join("callbacks.rs")).unwrap();
    for line in callbacks_rs.lines() {
        if let Some(rest) = line.trim().strip_prefix("pub type ") {
            let name = rest.split(['=', ' ', '<']).next().unwrap().trim();
            config.export.exclude.push(name.to_string());
        }
    }
    for f in functions.iter().filter(|f| f.variadic) {
        assert!(!f.has_twin, "a variadic function with a large-count twin");
        config.export.exclude.push(f.name.clone());
        config.export.exclude.push(format!("P{}", f.name));
    }
    config.export.exclude.push("QMPI_FUNCTIONS".to_string());
    config.trailer = Some(std::fs::read_to_string(vocabulary.join("mpi_trailer.h")).unwrap());
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(vocabulary.join("types.rs"))
        .with_src(vocabulary.join("constants.rs"))
        .with_src(&entry_points)
        .generate()
        .expect("cbindgen failed");
    let mut raw = Vec::new();
    bindings.write(&mut raw);
    let header = String::from_utf8(raw).unwrap();
    let callbacks_h = std::fs::read_to_string(vocabulary.join("callbacks.h")).unwrap();
    let header = insert_before_prototypes(&header, &callbacks_h);
    let header = insert_before_prototypes(&header, &qmpi_declarations(&qmpi));
    let header = add_qmpi_function_types(&header);
    let constants_rs = std::fs::read_to_string(vocabulary.join("constants.rs")).unwrap();
    let header = shape_defines(&header, &constants_rs);
    write_if_changed(&out_dir.join("mpi.h"), &header);
    write_if_changed(&root.join("include/mpi.h"), &header);
}

fn write_if_changed(path: &Path, content: &str) {
    if std::fs::read_to_string(path).ok().as_deref() != Some(content) {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, content).unwrap();
    }
}
