//! `when:` filter expressions of `Atomic` events: parsing, compilation and evaluation.
//!
//! A `when` expression compares event fields with literals (`speed > 10`,
//! `"ferry" == type`, `iff == false`), combined with `&&`, `||`, `!` and parentheses.
//! `!` binds tightest, then the comparisons, then `&&`, then `||`; `&&` and `||` are
//! left-associative. A bare field `iff` means `iff == true`.
//!
//! Fields are looked up in the event's attributes, except for the built-in names `id`,
//! `time` (seconds since the epoch; an RFC 3339 string literal is converted when the
//! expression is compiled), `type`, and the location: `x`/`y` in planar nets, `lon`/`lat`
//! in WGS84 nets. A comparison with a missing field, or between values of different
//! types, is false, and `!` negates that.
//!
//! [`Filter::compile`] checks everything that can be checked without an event and turns
//! the text into a small tree whose literals are already converted, so that
//! [`Filter::matches`] does not allocate.

use std::cmp::Ordering;
use std::fmt;
use std::sync::Arc;

use winnow::ascii::{digit0, digit1, multispace0};
use winnow::combinator::{alt, opt};
use winnow::error::EmptyError;
use winnow::token::{literal, one_of, take_till, take_while};
use winnow::Parser as _;

use crate::event::{Event, Id, Space, Timestamp, Value};

/// How deeply parentheses and `!` may nest; deeper input is rejected rather than
/// risking the stack.
const MAX_DEPTH: usize = 64;

/// A compiled `when` expression.
#[derive(Clone, Debug)]
pub(crate) struct Filter {
    /// The expression tree, literals converted.
    root: Node,
    /// The net's space, which names the location fields when printing.
    space: Space,
    /// Attribute names the expression reads (built-ins excluded), in order of first use.
    fields: Box<[Arc<str>]>,
}

/// Where and what: `offset` is the byte offset in `src` where the problem is.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub(crate) struct FilterError {
    /// Byte offset in the expression's text.
    pub(crate) offset: usize,
    /// What was wrong, lowercase, no trailing period.
    pub(crate) message: String,
}

impl FilterError {
    fn new(offset: usize, message: impl Into<String>) -> FilterError {
        FilterError {
            offset,
            message: message.into(),
        }
    }
}

impl Filter {
    /// Parses and compiles `src` for a net in `space`.
    pub(crate) fn compile(src: &str, space: Space) -> Result<Filter, FilterError> {
        let toks = lex(src)?;
        let mut p = ExprParser {
            src,
            toks,
            pos: 0,
            space,
            fields: Vec::new(),
        };
        let root = p.parse_or(0)?;
        match p.peek() {
            None => {}
            Some(Tok::RParen) => return Err(p.err_here("unexpected `)`")),
            Some(_) => {
                let msg = format!("expected `&&` or `||` before `{}`", p.text_here());
                return Err(p.err_here(msg));
            }
        }
        Ok(Filter {
            root,
            space,
            fields: p.fields.into_boxed_slice(),
        })
    }

    /// Does `event` satisfy the expression? Does not allocate.
    #[inline]
    pub(crate) fn matches(&self, event: &Event) -> bool {
        self.root.eval(event)
    }

    /// The `attribute == "text"` comparisons every matching event satisfies: the
    /// expression's top-level conjuncts of that form (through nested `&&`), as
    /// (attribute, text). An event whose attribute is missing or differs matches not.
    pub(crate) fn required_texts(&self) -> Vec<(&Arc<str>, &Arc<str>)> {
        fn walk<'a>(n: &'a Node, out: &mut Vec<(&'a Arc<str>, &'a Arc<str>)>) {
            match n {
                Node::Cmp(Cmp {
                    op: Op::Eq,
                    test: Test::AttrStr(attr, text),
                }) => out.push((attr, text)),
                Node::And(ns) => ns.iter().for_each(|n| walk(n, out)),
                _ => {}
            }
        }
        let mut out = Vec::new();
        walk(&self.root, &mut out);
        out
    }

    /// The attribute names the expression reads, each once, in order of first use.
    /// Built-in fields (`id`, `time`, `type`, the location) are not listed.
    pub(crate) fn fields(&self) -> impl Iterator<Item = &str> {
        self.fields.iter().map(|f| &**f)
    }
}

/// Prints the expression in canonical, fully parenthesised form, e.g.
/// `((speed > 10) && !(iff == true))`; the output compiles back to the same filter.
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.root.show(f, self.space)
    }
}

// ---------------------------------------------------------------------------
// Compiled form and evaluation

/// A node of the compiled expression.
#[derive(Clone, Debug)]
enum Node {
    Cmp(Cmp),
    Not(Box<Node>),
    /// Two or more operands of one `&&` chain (left-associative).
    And(Box<[Node]>),
    /// Two or more operands of one `||` chain (left-associative).
    Or(Box<[Node]>),
}

impl Node {
    fn eval(&self, e: &Event) -> bool {
        match self {
            Node::Cmp(c) => c.eval(e),
            Node::Not(n) => !n.eval(e),
            Node::And(ns) => ns.iter().all(|n| n.eval(e)),
            Node::Or(ns) => ns.iter().any(|n| n.eval(e)),
        }
    }

    fn show(&self, f: &mut fmt::Formatter<'_>, space: Space) -> fmt::Result {
        match self {
            Node::Cmp(c) => c.show(f, space),
            Node::Not(n) => {
                f.write_str("!")?;
                n.show(f, space)
            }
            Node::And(ns) => show_chain(f, space, ns, " && "),
            Node::Or(ns) => show_chain(f, space, ns, " || "),
        }
    }
}

/// Prints `a op b op c` as `((a op b) op c)`.
fn show_chain(f: &mut fmt::Formatter<'_>, space: Space, ns: &[Node], op: &str) -> fmt::Result {
    for _ in 1..ns.len() {
        f.write_str("(")?;
    }
    for (i, n) in ns.iter().enumerate() {
        if i > 0 {
            f.write_str(op)?;
        }
        n.show(f, space)?;
        if i > 0 {
            f.write_str(")")?;
        }
    }
    Ok(())
}

/// A comparison operator, applied as `field op literal`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Op {
    fn as_str(self) -> &'static str {
        match self {
            Op::Eq => "==",
            Op::Ne => "!=",
            Op::Lt => "<",
            Op::Le => "<=",
            Op::Gt => ">",
            Op::Ge => ">=",
        }
    }

    /// The operator with its sides swapped: `10 < x` is `x > 10`.
    fn flip(self) -> Op {
        match self {
            Op::Eq => Op::Eq,
            Op::Ne => Op::Ne,
            Op::Lt => Op::Gt,
            Op::Le => Op::Ge,
            Op::Gt => Op::Lt,
            Op::Ge => Op::Le,
        }
    }

    fn is_ordering(self) -> bool {
        !matches!(self, Op::Eq | Op::Ne)
    }

    #[inline]
    fn num(self, a: f64, b: f64) -> bool {
        match self {
            Op::Eq => a == b,
            Op::Ne => a != b,
            Op::Lt => a < b,
            Op::Le => a <= b,
            Op::Gt => a > b,
            Op::Ge => a >= b,
        }
    }

    #[inline]
    fn ord(self, o: Ordering) -> bool {
        match self {
            Op::Eq => o.is_eq(),
            Op::Ne => o.is_ne(),
            Op::Lt => o.is_lt(),
            Op::Le => o.is_le(),
            Op::Gt => o.is_gt(),
            Op::Ge => o.is_ge(),
        }
    }

    #[inline]
    fn str(self, a: &str, b: &str) -> bool {
        match self {
            Op::Eq => same(a, b),
            Op::Ne => !same(a, b),
            _ => self.ord(a.as_bytes().cmp(b.as_bytes())),
        }
    }
}

/// One comparison `field op literal`, specialised by field and literal type.
#[derive(Clone, Debug)]
struct Cmp {
    op: Op,
    test: Test,
}

/// What a comparison reads and the literal it compares with.
#[derive(Clone, Debug)]
enum Test {
    /// A numeric attribute.
    AttrNum(Arc<str>, f64),
    /// A string attribute.
    AttrStr(Arc<str>, Arc<str>),
    /// A boolean attribute (only `==` and `!=`).
    AttrBool(Arc<str>, bool),
    /// The id against a number; `int` is the literal's exact value when it is written
    /// as an integer, so that large integer ids compare exactly.
    IdNum { value: f64, int: Option<i128> },
    /// The id against a string.
    IdStr(Arc<str>),
    /// The time in seconds; `text` is the RFC 3339 literal when it was written as one.
    Time { secs: f64, text: Option<Arc<str>> },
    /// The event's type.
    Type(Arc<str>),
    /// The location's first coordinate (`x` or `lon`).
    X(f64),
    /// The location's second coordinate (`y` or `lat`).
    Y(f64),
}

impl Cmp {
    #[inline]
    fn eval(&self, e: &Event) -> bool {
        let op = self.op;
        match &self.test {
            Test::AttrNum(name, v) => {
                matches!(attr(e, name), Some(Value::Num(a)) if op.num(*a, *v))
            }
            Test::AttrStr(name, v) => matches!(attr(e, name), Some(Value::Str(a)) if op.str(a, v)),
            Test::AttrBool(name, v) => {
                matches!(attr(e, name), Some(Value::Bool(a)) if (a == v) == (op == Op::Eq))
            }
            Test::IdNum { value, int } => match (&e.id, int) {
                (Id::Int(a), Some(b)) => op.ord(i128::from(*a).cmp(b)),
                (Id::UInt(a), Some(b)) => op.ord(i128::from(*a).cmp(b)),
                (Id::Int(a), None) => op.num(*a as f64, *value),
                (Id::UInt(a), None) => op.num(*a as f64, *value),
                (Id::Str(_), _) => false,
            },
            Test::IdStr(v) => matches!(&e.id, Id::Str(a) if op.str(a, v)),
            Test::Time { secs, .. } => op.num(e.time.as_secs_f64(), *secs),
            Test::Type(v) => op.str(&e.kind, v),
            Test::X(v) => matches!(e.location, Some(p) if op.num(p.x, *v)),
            Test::Y(v) => matches!(e.location, Some(p) if op.num(p.y, *v)),
        }
    }

    fn show(&self, f: &mut fmt::Formatter<'_>, space: Space) -> fmt::Result {
        let (xn, yn) = space.axis_names();
        let op = self.op.as_str();
        match &self.test {
            Test::AttrNum(n, v) => write!(f, "({n} {op} {})", Num(*v)),
            Test::AttrStr(n, v) => write!(f, "({n} {op} {})", Quoted(v)),
            Test::AttrBool(n, v) => write!(f, "({n} {op} {v})"),
            Test::IdNum { int: Some(i), .. } => write!(f, "(id {op} {i})"),
            Test::IdNum { value, int: None } => write!(f, "(id {op} {})", Num(*value)),
            Test::IdStr(v) => write!(f, "(id {op} {})", Quoted(v)),
            Test::Time { text: Some(t), .. } => write!(f, "(time {op} {})", Quoted(t)),
            Test::Time { secs, text: None } => write!(f, "(time {op} {})", Num(*secs)),
            Test::Type(v) => write!(f, "(type {op} {})", Quoted(v)),
            Test::X(v) => write!(f, "({xn} {op} {})", Num(*v)),
            Test::Y(v) => write!(f, "({yn} {op} {})", Num(*v)),
        }
    }
}

/// The value of attribute `name` of `e`, like [`Event::attr`] but quicker for the
/// short names attributes usually have.
#[inline]
pub(crate) fn attr<'e>(e: &'e Event, name: &str) -> Option<&'e Value> {
    e.attrs.iter().find(|(k, _)| same(k, name)).map(|(_, v)| v)
}

/// String equality, inlined for short strings rather than calling `memcmp`.
#[inline]
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        false
    } else if a.len() <= 16 {
        a.iter().zip(b).all(|(x, y)| x == y)
    } else {
        a == b
    }
}

/// Prints a number so that it reads back as the same `f64`.
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let a = self.0.abs();
        if a == 0.0 || (1e-5..1e16).contains(&a) {
            write!(f, "{}", self.0)
        } else {
            write!(f, "{:e}", self.0)
        }
    }
}

/// Prints a string literal with `"` and `\` escaped.
struct Quoted<'a>(&'a str);

impl fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"")?;
        for c in self.0.chars() {
            if c == '"' || c == '\\' {
                f.write_str("\\")?;
            }
            write!(f, "{c}")?;
        }
        f.write_str("\"")
    }
}

// ---------------------------------------------------------------------------
// Lexing

/// A token's kind and value.
#[derive(Clone, Debug, PartialEq)]
enum Tok {
    LParen,
    RParen,
    Not,
    AndAnd,
    OrOr,
    Cmp(Op),
    Ident,
    /// A number; `int` is its exact value when written as an integer.
    Num {
        value: f64,
        int: Option<i128>,
    },
    Str(Arc<str>),
    Bool(bool),
}

/// A token and where it is in the source.
#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    start: usize,
    end: usize,
}

type Lx<O> = Result<O, EmptyError>;

fn ident_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

fn punct(i: &mut &str) -> Lx<Tok> {
    // `alt` takes at most nine alternatives: two-character operators first.
    alt((
        alt((
            literal("&&").value(Tok::AndAnd),
            literal("||").value(Tok::OrOr),
            literal("==").value(Tok::Cmp(Op::Eq)),
            literal("!=").value(Tok::Cmp(Op::Ne)),
            literal("<=").value(Tok::Cmp(Op::Le)),
            literal(">=").value(Tok::Cmp(Op::Ge)),
        )),
        alt((
            literal("<").value(Tok::Cmp(Op::Lt)),
            literal(">").value(Tok::Cmp(Op::Gt)),
            literal("!").value(Tok::Not),
            literal("(").value(Tok::LParen),
            literal(")").value(Tok::RParen),
        )),
    ))
    .parse_next(i)
}

/// `-?(digits(.digits*)?|.digits)([eE][+-]?digits)?`, as text.
fn number_text<'s>(i: &mut &'s str) -> Lx<&'s str> {
    (
        opt('-'),
        alt(((digit1, opt(('.', digit0))).void(), ('.', digit1).void())),
        opt((one_of(['e', 'E']), opt(one_of(['+', '-'])), digit1)),
    )
        .take()
        .parse_next(i)
}

fn identifier<'s>(i: &mut &'s str) -> Lx<&'s str> {
    (
        one_of(|c: char| c.is_ascii_alphabetic() || c == '_'),
        take_while(0.., ident_char),
    )
        .take()
        .parse_next(i)
}

/// Runs `p`, leaving the input untouched if it fails.
fn attempt<'s, O>(i: &mut &'s str, mut p: impl FnMut(&mut &'s str) -> Lx<O>) -> Option<O> {
    let mut j = *i;
    let out = p(&mut j).ok()?;
    *i = j;
    Some(out)
}

/// Splits `src` into tokens.
fn lex(src: &str) -> Result<Vec<Token>, FilterError> {
    let mut toks = Vec::new();
    let mut i: &str = src;
    loop {
        let _ = multispace0::<_, EmptyError>.parse_next(&mut i);
        let start = src.len() - i.len();
        let Some(c) = i.chars().next() else {
            return Ok(toks);
        };
        let tok = if c == '"' {
            lex_string(src, &mut i)?
        } else if c.is_ascii_digit() || c == '-' || c == '.' {
            lex_number(src, &mut i)?
        } else if let Some(word) = attempt(&mut i, identifier) {
            match word {
                "true" => Tok::Bool(true),
                "false" => Tok::Bool(false),
                _ => Tok::Ident,
            }
        } else if let Some(t) = attempt(&mut i, punct) {
            t
        } else {
            let msg = match c {
                '=' => "`=` is not an operator; use `==`".to_owned(),
                '&' => "`&` is not an operator; use `&&`".to_owned(),
                '|' => "`|` is not an operator; use `||`".to_owned(),
                '\'' => "strings are written in double quotes".to_owned(),
                _ => format!("unexpected `{c}`"),
            };
            return Err(FilterError::new(start, msg));
        };
        let end = src.len() - i.len();
        toks.push(Token { tok, start, end });
    }
}

fn lex_number(src: &str, i: &mut &str) -> Result<Tok, FilterError> {
    let start = src.len() - i.len();
    let first = i.chars().next().unwrap_or('-');
    let text = match number_text(i) {
        Ok(t) => t,
        Err(EmptyError) => {
            return Err(FilterError::new(start, format!("unexpected `{first}`")));
        }
    };
    if i.starts_with(|c: char| ident_char(c) || c == '.') {
        let rest = take_while::<_, _, EmptyError>(0.., |c: char| ident_char(c) || c == '.')
            .parse_next(i)
            .unwrap_or_default();
        return Err(FilterError::new(
            start,
            format!("invalid number `{text}{rest}`"),
        ));
    }
    let value: f64 = text
        .parse()
        .map_err(|_| FilterError::new(start, format!("invalid number `{text}`")))?;
    if !value.is_finite() {
        return Err(FilterError::new(
            start,
            format!("number `{text}` is out of range"),
        ));
    }
    let int = if text.contains(['.', 'e', 'E']) {
        None
    } else {
        text.parse::<i128>().ok()
    };
    Ok(Tok::Num { value, int })
}

fn lex_string(src: &str, i: &mut &str) -> Result<Tok, FilterError> {
    let start = src.len() - i.len();
    *i = &i[1..];
    let mut out = String::new();
    loop {
        let chunk = take_till::<_, _, EmptyError>(0.., ['"', '\\'])
            .parse_next(i)
            .unwrap_or_default();
        out.push_str(chunk);
        let at = src.len() - i.len();
        let mut chars = i.chars();
        match chars.next() {
            None => return Err(FilterError::new(start, "unterminated string")),
            Some('"') => {
                *i = chars.as_str();
                return Ok(Tok::Str(out.into()));
            }
            Some(_) => match chars.next() {
                Some(c @ ('"' | '\\')) => {
                    out.push(c);
                    *i = chars.as_str();
                }
                None => return Err(FilterError::new(start, "unterminated string")),
                Some(c) => {
                    return Err(FilterError::new(
                        at,
                        format!(
                            "unknown escape `\\{c}` in string; only `\\\"` and `\\\\` are allowed"
                        ),
                    ))
                }
            },
        }
    }
}

// ---------------------------------------------------------------------------
// Parsing

/// Recursive descent over the tokens, compiling as it goes.
struct ExprParser<'s> {
    src: &'s str,
    toks: Vec<Token>,
    pos: usize,
    space: Space,
    fields: Vec<Arc<str>>,
}

/// A comparison operand as written: a field name or a literal, and where.
struct Operand<'s> {
    tok: Tok,
    text: &'s str,
    start: usize,
}

impl<'s> ExprParser<'s> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos).map(|t| &t.tok)
    }

    /// Offset of the next token, or the end of the source.
    fn offset_here(&self) -> usize {
        self.toks.get(self.pos).map_or(self.src.len(), |t| t.start)
    }

    fn text_of(&self, t: &Token) -> &'s str {
        self.src.get(t.start..t.end).unwrap_or("")
    }

    /// Text of the next token (empty at the end).
    fn text_here(&self) -> &'s str {
        self.toks.get(self.pos).map_or("", |t| self.text_of(t))
    }

    fn err_here(&self, msg: impl Into<String>) -> FilterError {
        FilterError::new(self.offset_here(), msg)
    }

    fn bump(&mut self) {
        self.pos += 1;
    }

    fn parse_or(&mut self, depth: usize) -> Result<Node, FilterError> {
        let mut items = vec![self.parse_and(depth)?];
        while self.peek() == Some(&Tok::OrOr) {
            self.bump();
            items.push(self.parse_and(depth)?);
        }
        Ok(chain(items, Node::Or))
    }

    fn parse_and(&mut self, depth: usize) -> Result<Node, FilterError> {
        let mut items = vec![self.parse_unary(depth)?];
        while self.peek() == Some(&Tok::AndAnd) {
            self.bump();
            items.push(self.parse_unary(depth)?);
        }
        Ok(chain(items, Node::And))
    }

    fn check_depth(&self, depth: usize) -> Result<(), FilterError> {
        if depth >= MAX_DEPTH {
            Err(self.err_here(format!(
                "expression nested too deeply (more than {MAX_DEPTH} levels)"
            )))
        } else {
            Ok(())
        }
    }

    /// A negation, or a primary.
    fn parse_unary(&mut self, depth: usize) -> Result<Node, FilterError> {
        if self.peek() != Some(&Tok::Not) {
            return self.parse_primary(depth);
        }
        self.check_depth(depth)?;
        self.bump();
        // `!` binds tighter than the comparisons: its operand is a negation, a
        // parenthesised expression or a bare field, never a comparison.
        let inner = match self.peek() {
            Some(Tok::Not) => self.parse_unary(depth + 1)?,
            Some(Tok::LParen) => self.parse_group(depth + 1)?,
            Some(Tok::Ident) => {
                let t = self.operand();
                self.bare_field(&t)?
            }
            _ => {
                let found = self.found_here();
                return Err(
                    self.err_here(format!("expected a field or `(` after `!`, found {found}"))
                );
            }
        };
        if let Some(Tok::Cmp(op)) = self.peek() {
            return Err(self.err_here(format!(
                "`!` binds tighter than `{}`; to negate a comparison write `!(a {} b)`",
                op.as_str(),
                op.as_str()
            )));
        }
        Ok(Node::Not(Box::new(inner)))
    }

    /// A parenthesised expression or a comparison.
    fn parse_primary(&mut self, depth: usize) -> Result<Node, FilterError> {
        match self.peek() {
            Some(Tok::LParen) => {
                let node = self.parse_group(depth + 1)?;
                if let Some(Tok::Cmp(op)) = self.peek() {
                    return Err(self.err_here(format!(
                        "`{}` cannot compare a parenthesised expression; compare a field with a literal",
                        op.as_str()
                    )));
                }
                Ok(node)
            }
            Some(Tok::Ident | Tok::Num { .. } | Tok::Str(_) | Tok::Bool(_)) => {
                self.parse_comparison()
            }
            Some(Tok::RParen) => Err(self.err_here("unexpected `)`")),
            Some(Tok::Cmp(op)) => {
                let msg = format!("expected a field or a literal before `{}`", op.as_str());
                Err(self.err_here(msg))
            }
            Some(Tok::AndAnd | Tok::OrOr | Tok::Not) => {
                let msg = format!("unexpected `{}`", self.text_here());
                Err(self.err_here(msg))
            }
            None => match self.pos.checked_sub(1).and_then(|p| self.toks.get(p)) {
                None => Err(self.err_here("empty expression")),
                Some(prev) => {
                    let msg = format!("expected an expression after `{}`", self.text_of(prev));
                    Err(self.err_here(msg))
                }
            },
        }
    }

    /// `( expr )`, the next token being `(`.
    fn parse_group(&mut self, depth: usize) -> Result<Node, FilterError> {
        self.check_depth(depth)?;
        let open = self.offset_here();
        self.bump();
        let node = self.parse_or(depth)?;
        match self.peek() {
            Some(Tok::RParen) => {
                self.bump();
                Ok(node)
            }
            None => Err(FilterError::new(open, "unclosed `(`: expected `)`")),
            Some(_) => {
                let msg = format!("expected `&&`, `||` or `)` before `{}`", self.text_here());
                Err(self.err_here(msg))
            }
        }
    }

    /// Describes the next token for "found …" messages.
    fn found_here(&self) -> String {
        match self.peek() {
            None => "the end".to_owned(),
            Some(_) => format!("`{}`", self.text_here()),
        }
    }

    /// Takes the next token as an operand.
    fn operand(&mut self) -> Operand<'s> {
        let o = match self.toks.get(self.pos) {
            Some(t) => Operand {
                tok: t.tok.clone(),
                text: self.text_of(t),
                start: t.start,
            },
            None => Operand {
                tok: Tok::Ident,
                text: "",
                start: self.src.len(),
            },
        };
        self.bump();
        o
    }

    /// `field op literal`, `literal op field` or a bare field; the next token is an
    /// identifier or a literal.
    fn parse_comparison(&mut self) -> Result<Node, FilterError> {
        let a = self.operand();
        let Some(Tok::Cmp(op)) = self.peek().cloned() else {
            if a.tok == Tok::Ident {
                let node = self.bare_field(&a)?;
                if matches!(
                    self.peek(),
                    Some(
                        Tok::Ident
                            | Tok::Num { .. }
                            | Tok::Str(_)
                            | Tok::Bool(_)
                            | Tok::LParen
                            | Tok::Not
                    )
                ) {
                    let msg = format!("expected a comparison operator after `{}`", a.text);
                    return Err(self.err_here(msg));
                }
                return Ok(node);
            }
            let msg = format!("expected a comparison operator after `{}`", a.text);
            return Err(self.err_here(msg));
        };
        let op_at = self.offset_here();
        self.bump();
        if !matches!(
            self.peek(),
            Some(Tok::Ident | Tok::Num { .. } | Tok::Str(_) | Tok::Bool(_))
        ) {
            let found = self.found_here();
            return Err(self.err_here(format!(
                "expected a field or a literal after `{}`, found {found}",
                op.as_str()
            )));
        }
        let b = self.operand();
        if op.is_ordering() && [&a.tok, &b.tok].iter().any(|t| matches!(t, Tok::Bool(_))) {
            return Err(FilterError::new(
                op_at,
                format!("`{}` cannot compare booleans", op.as_str()),
            ));
        }
        let node = match (a.tok == Tok::Ident, b.tok == Tok::Ident) {
            (true, false) => self.comparison(&a, op, &b)?,
            (false, true) => self.comparison(&b, op.flip(), &a)?,
            (true, true) => {
                return Err(FilterError::new(
                    b.start,
                    format!(
                        "cannot compare field `{}` with field `{}`; compare a field with a literal",
                        a.text, b.text
                    ),
                ))
            }
            (false, false) => {
                return Err(FilterError::new(
                    a.start,
                    format!("expected a field on one side of `{}`", op.as_str()),
                ))
            }
        };
        if let Some(Tok::Cmp(op2)) = self.peek() {
            let msg = format!(
                "unexpected `{}`: comparisons cannot be chained; join them with `&&`",
                op2.as_str()
            );
            return Err(self.err_here(msg));
        }
        Ok(node)
    }

    /// A bare field `f`, meaning `f == true`.
    fn bare_field(&mut self, field: &Operand<'s>) -> Result<Node, FilterError> {
        let lit = Operand {
            tok: Tok::Bool(true),
            text: "true",
            start: field.start,
        };
        self.comparison(field, Op::Eq, &lit)
    }

    /// Compiles `field op lit` (orderings of booleans are already rejected).
    fn comparison(
        &mut self,
        field: &Operand<'s>,
        op: Op,
        lit: &Operand<'s>,
    ) -> Result<Node, FilterError> {
        let name = field.text;
        let lit_type = match lit.tok {
            Tok::Num { .. } => "a number",
            Tok::Str(_) => "a string",
            _ => "a boolean",
        };
        let wrong = |expected: &str| {
            FilterError::new(lit.start, format!("`{name}` is {expected}, not {lit_type}"))
        };
        let (xn, yn) = self.space.axis_names();
        let test = match (name, &lit.tok) {
            ("id", Tok::Num { value, int }) => Test::IdNum {
                value: *value,
                int: *int,
            },
            ("id", Tok::Str(s)) => Test::IdStr(s.clone()),
            ("id", _) => return Err(wrong("a number or a string")),
            ("time", Tok::Num { value, .. }) => Test::Time {
                secs: *value,
                text: None,
            },
            ("time", Tok::Str(s)) => Test::Time {
                secs: rfc3339_secs(s, lit.start)?,
                text: Some(s.clone()),
            },
            ("time", _) => return Err(wrong("a number or an RFC 3339 string")),
            ("type", Tok::Str(s)) => Test::Type(s.clone()),
            ("type", _) => return Err(wrong("a string")),
            (n, Tok::Num { value, .. }) if n == xn => Test::X(*value),
            (n, Tok::Num { value, .. }) if n == yn => Test::Y(*value),
            (n, _) if n == xn || n == yn => return Err(wrong("a number")),
            (n, tok) => {
                let attr = self.attr_name(n);
                match tok {
                    Tok::Num { value, .. } => Test::AttrNum(attr, *value),
                    Tok::Str(s) => Test::AttrStr(attr, s.clone()),
                    Tok::Bool(b) if !op.is_ordering() => Test::AttrBool(attr, *b),
                    _ => {
                        return Err(FilterError::new(
                            lit.start,
                            format!("expected a literal, found `{}`", lit.text),
                        ))
                    }
                }
            }
        };
        Ok(Node::Cmp(Cmp { op, test }))
    }

    /// The shared name of attribute `n`, recorded in the field list.
    fn attr_name(&mut self, n: &str) -> Arc<str> {
        if let Some(f) = self.fields.iter().find(|f| &***f == n) {
            return f.clone();
        }
        let f: Arc<str> = n.into();
        self.fields.push(f.clone());
        f
    }
}

/// One operand as itself, several as a chain node.
fn chain(mut items: Vec<Node>, make: fn(Box<[Node]>) -> Node) -> Node {
    if items.len() == 1 {
        if let Some(n) = items.pop() {
            return n;
        }
    }
    make(items.into_boxed_slice())
}

/// Seconds since the epoch of an RFC 3339 time literal, rounded to the microsecond like
/// event times.
fn rfc3339_secs(s: &str, at: usize) -> Result<f64, FilterError> {
    let ts: jiff::Timestamp = s.parse().map_err(|_| {
        FilterError::new(
            at,
            format!(
                "expected an RFC 3339 time such as \"2024-05-01T12:00:00Z\", found {}",
                Quoted(s)
            ),
        )
    })?;
    let micros = (ts.as_nanosecond() + 500).div_euclid(1000);
    i64::try_from(micros)
        .ok()
        .and_then(Timestamp::from_micros)
        .map(Timestamp::as_secs_f64)
        .ok_or_else(|| {
            FilterError::new(
                at,
                format!("time {} is outside the years 0001–9999", Quoted(s)),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ev() -> Event {
        Event::new(7, "ferry", Timestamp::from_secs_f64(100.5).unwrap())
    }

    fn compile(src: &str) -> Filter {
        match Filter::compile(src, Space::Planar) {
            Ok(f) => f,
            Err(e) => panic!("{src:?} failed at {}: {}", e.offset, e.message),
        }
    }

    fn m(src: &str, e: &Event) -> bool {
        compile(src).matches(e)
    }

    fn err(src: &str, space: Space) -> (usize, String) {
        match Filter::compile(src, space) {
            Ok(f) => panic!("{src:?} compiled to {f}"),
            Err(e) => (e.offset, e.message),
        }
    }

    fn shown(src: &str) -> String {
        compile(src).to_string()
    }

    #[test]
    fn number_operators() {
        let e = ev().with("speed", 12.5);
        for (src, want) in [
            ("speed == 12.5", true),
            ("speed == 12", false),
            ("speed != 12", true),
            ("speed != 12.5", false),
            ("speed < 13", true),
            ("speed < 12.5", false),
            ("speed <= 12.5", true),
            ("speed <= 12", false),
            ("speed > 12", true),
            ("speed > 12.5", false),
            ("speed >= 12.5", true),
            ("speed >= 13", false),
            ("speed > -3.5", true),
            ("speed < 1e3", true),
            ("speed < 1E1", false),
            ("speed == 125e-1", true),
            ("speed == .125e2", true),
            ("speed == 12.50", true),
        ] {
            assert_eq!(m(src, &e), want, "{src}");
        }
    }

    #[test]
    fn literal_on_the_left() {
        let e = ev().with("speed", 12.5);
        assert!(m("10 < speed", &e));
        assert!(!m("10 > speed", &e));
        assert!(m("12.5 <= speed", &e));
        assert!(m("13 >= speed", &e));
        assert!(m("12.5 == speed", &e));
        assert!(m("1 != speed", &e));
        assert_eq!(shown("10 < speed"), "(speed > 10)");
        assert_eq!(shown("10 >= speed"), "(speed <= 10)");
    }

    #[test]
    fn string_operators() {
        let e = ev().with("name", "bravo");
        for (src, want) in [
            (r#"name == "bravo""#, true),
            (r#"name != "bravo""#, false),
            (r#"name != "alpha""#, true),
            (r#"name < "charlie""#, true),
            (r#"name < "bravo""#, false),
            (r#"name <= "bravo""#, true),
            (r#"name > "b""#, true),
            (r#"name > "bravo ""#, false),
            (r#"name >= "bravo""#, true),
            (r#"name < "Z""#, false), // byte-wise: 'b' > 'Z'
            (r#""alpha" < name"#, true),
        ] {
            assert_eq!(m(src, &e), want, "{src}");
        }
        // Byte-wise, not by char: 'é' (0xC3 0xA9) sorts after 'z'.
        let e = ev().with("name", "é");
        assert!(m(r#"name > "z""#, &e));
    }

    #[test]
    fn bool_operators_and_bare_fields() {
        let e = ev().with("iff", true).with("lost", false);
        assert!(m("iff == true", &e));
        assert!(!m("iff == false", &e));
        assert!(m("iff != false", &e));
        assert!(m("true == iff", &e));
        assert!(m("iff", &e));
        assert!(!m("lost", &e));
        assert!(m("!lost", &e));
        assert!(m("lost == false", &e));
        assert!(!m("missing", &e));
        assert!(m("!missing", &e));
        assert_eq!(shown("iff"), "(iff == true)");
        assert_eq!(shown("!iff"), "!(iff == true)");
    }

    #[test]
    fn precedence_and_associativity() {
        let t = ev().with("t", true).with("f", false);
        // `||` below `&&`.
        assert!(m("t || f && f", &t));
        assert!(!m("(t || f) && f", &t));
        assert!(m("f && f || t", &t));
        // `!` binds tightest.
        assert!(!m("!t && f", &t));
        assert!(m("!f && t", &t));
        assert!(m("!t || t", &t));
        assert!(!m("!(t || t)", &t));
        assert!(m("!!t", &t));
        // Comparisons bind tighter than `&&`/`||`.
        let e = ev().with("a", 1.0).with("b", 2.0);
        assert!(m("a == 1 && b == 2", &e));
        assert!(m("a == 2 || b == 2", &e));
        assert!(m("!(a == 2) && !(b > 5)", &e));
        assert_eq!(
            shown("a == 1 || b == 2 && !c"),
            "((a == 1) || ((b == 2) && !(c == true)))"
        );
        assert_eq!(
            shown("a == 1 && b == 2 && c"),
            "(((a == 1) && (b == 2)) && (c == true))"
        );
        assert_eq!(
            shown("a || b || c && d"),
            "(((a == true) || (b == true)) || ((c == true) && (d == true)))"
        );
        assert_eq!(
            shown("a && (b && c)"),
            "((a == true) && ((b == true) && (c == true)))"
        );
        assert_eq!(shown("((((a))))"), "(a == true)");
    }

    #[test]
    fn whitespace_anywhere() {
        let e = ev().with("speed", 20.0).with("iff", false);
        assert!(m("speed>10&&iff==false", &e));
        assert!(m(" \t\n( speed\n>\t10 )\r\n&&\n! iff ", &e));
        assert!(m("speed>-1", &e));
        assert!(m("speed!=-1", &e));
    }

    #[test]
    fn missing_fields_and_type_mismatch_are_false() {
        let e = ev().with("speed", "fast").with("iff", 1.0);
        for src in [
            "nope == 1",
            "nope != 1",
            "nope < 1",
            r#"nope == "x""#,
            "nope == false",
            "nope != false",
            "speed > 10",
            "speed != 10",
            "speed == 10",
            "iff == true",
            "iff != true",
            r#"iff == "1""#,
            r#"iff != "1""#,
            "iff",
        ] {
            assert!(!m(src, &e), "{src}");
            // `!` negates the false comparison: the contract.
            assert!(m(&format!("!({src})"), &e), "!({src})");
        }
    }

    #[test]
    fn contract_example() {
        let f = compile("speed > 10 && iff == false");
        assert!(f.matches(&ev().with("speed", 11.0).with("iff", false)));
        assert!(!f.matches(&ev().with("speed", 11.0).with("iff", true)));
        assert!(!f.matches(&ev().with("speed", 9.0).with("iff", false)));
        assert!(!f.matches(&ev().with("speed", 11.0)));
        assert!(!f.matches(&ev().with("iff", false)));
        assert_eq!(f.to_string(), "((speed > 10) && (iff == false))");
    }

    #[test]
    fn builtin_id() {
        let int = ev();
        assert!(m("id == 7", &int));
        assert!(m("id == 7.0", &int));
        assert!(m("id >= 7", &int));
        assert!(m("id < 7.5", &int));
        assert!(!m(r#"id == "7""#, &int));
        assert!(!m(r#"id != "7""#, &int));
        let big = Event::new(Id::UInt(u64::MAX), "a", Timestamp::default());
        assert!(m("id == 18446744073709551615", &big));
        assert!(!m("id == 18446744073709551614", &big));
        assert!(m("id > 18446744073709551614", &big));
        assert!(m("id > 1e19", &big));
        // Exact for integers beyond 2^53, where f64 would confuse neighbours.
        let near = Event::new(9_007_199_254_740_993_i64, "a", Timestamp::default());
        assert!(m("id == 9007199254740993", &near));
        assert!(!m("id == 9007199254740992", &near));
        let neg = Event::new(-3, "a", Timestamp::default());
        assert!(m("id == -3", &neg));
        assert!(m("id < -2.5", &neg));
        let s = Event::new("ab", "a", Timestamp::default());
        assert!(m(r#"id == "ab""#, &s));
        assert!(m(r#"id < "b""#, &s));
        assert!(!m("id == 7", &s));
        assert!(!m("id != 7", &s));
        assert_eq!(
            shown("id == 18446744073709551615"),
            "(id == 18446744073709551615)"
        );
        assert_eq!(shown("id == 7.5"), "(id == 7.5)");
    }

    #[test]
    fn builtin_time() {
        let e = ev(); // 100.5 s after the epoch
        assert!(m("time == 100.5", &e));
        assert!(m("time > 100", &e));
        assert!(m("time < 1e3", &e));
        assert!(m(r#"time == "1970-01-01T00:01:40.5Z""#, &e));
        assert!(m(r#"time > "1970-01-01T00:01:40Z""#, &e));
        assert!(!m(r#"time < "1970-01-01T01:01:40.5+01:00""#, &e));
        assert!(m(r#"time == "1970-01-01T01:01:40.5+01:00""#, &e));
        assert!(m(r#""1970-01-01T00:01:40Z" < time"#, &e));
        let later = Event::new(1, "a", Timestamp::from_secs_f64(1_714_564_800.25).unwrap());
        assert!(m(r#"time == "2024-05-01T12:00:00.25Z""#, &later));
        assert!(m(
            r#"time >= "2024-05-01T12:00:00Z" && time < "2024-05-02T00:00:00Z""#,
            &later
        ));
        assert_eq!(
            shown(r#"time >= "2024-05-01T12:00:00Z""#),
            r#"(time >= "2024-05-01T12:00:00Z")"#
        );
    }

    #[test]
    fn builtin_type() {
        let e = ev();
        assert!(m(r#"type == "ferry""#, &e));
        assert!(!m(r#"type == "cargo""#, &e));
        assert!(m(r#"type != "cargo""#, &e));
        assert!(m(r#"type > "cargo""#, &e));
    }

    #[test]
    fn builtin_location_per_space() {
        let e = ev().at(3.0, 4.0).with("lon", 99.0).with("x_", 1.0);
        let planar = |s: &str| Filter::compile(s, Space::Planar).unwrap().matches(&e);
        let wgs = |s: &str| Filter::compile(s, Space::Wgs84).unwrap().matches(&e);
        assert!(planar("x == 3 && y == 4"));
        assert!(planar("x < 3.5 && 3.5 < y"));
        assert!(planar("lon == 99")); // an attribute in a planar net
        assert!(!planar("lat == 4"));
        assert!(wgs("lon == 3 && lat == 4"));
        assert!(!wgs("lon == 99"));
        assert!(!wgs("x == 3")); // an attribute in a WGS84 net, missing here
        assert!(wgs("!(x == 3)"));
        assert!(planar("x_ == 1"));
        // Missing location: missing field.
        let nowhere = ev();
        let f = Filter::compile("x > -1000", Space::Planar).unwrap();
        assert!(!f.matches(&nowhere));
        let f = Filter::compile("!(lat > -1000)", Space::Wgs84).unwrap();
        assert!(f.matches(&nowhere));
        assert_eq!(
            Filter::compile("lon > 1 && lat < 2", Space::Wgs84)
                .unwrap()
                .to_string(),
            "((lon > 1) && (lat < 2))"
        );
    }

    #[test]
    fn string_escapes() {
        let e = ev().with("s", r#"say "hi" \o/"#);
        assert!(m(r#"s == "say \"hi\" \\o/""#, &e));
        assert_eq!(
            shown(r#"s == "say \"hi\" \\o/""#),
            r#"(s == "say \"hi\" \\o/")"#
        );
        assert!(m(r#"s != """#, &e));
        let e = ev().with("s", "");
        assert!(m(r#"s == """#, &e));
        let e = ev().with("s", "ünï && )");
        assert!(m(r#"s == "ünï && )""#, &e));
    }

    #[test]
    fn fields_lists_attributes_once() {
        let f = compile(
            r#"speed > 1 && (iff || !(speed < 3)) && id == 2 && type == "a" && x > 0 && zone == "b""#,
        );
        assert_eq!(f.fields().collect::<Vec<_>>(), ["speed", "iff", "zone"]);
    }

    #[test]
    fn errors_with_offsets() {
        let p = Space::Planar;
        let cases: &[(&str, usize, &str)] = &[
            ("", 0, "empty expression"),
            ("   ", 3, "empty expression"),
            (
                "speed >",
                7,
                "expected a field or a literal after `>`, found the end",
            ),
            (
                "speed > )",
                8,
                "expected a field or a literal after `>`, found `)`",
            ),
            (
                "speed 10",
                6,
                "expected a comparison operator after `speed`",
            ),
            ("10", 2, "expected a comparison operator after `10`"),
            (
                "true && a",
                5,
                "expected a comparison operator after `true`",
            ),
            (r#"a == "abc"#, 5, "unterminated string"),
            (r#"a == "abc\"#, 5, "unterminated string"),
            (
                r#"a == "x\n""#,
                7,
                r#"unknown escape `\n` in string; only `\"` and `\\` are allowed"#,
            ),
            ("flag < true", 5, "`<` cannot compare booleans"),
            ("false >= flag", 6, "`>=` cannot compare booleans"),
            ("a == 1)", 6, "unexpected `)`"),
            (")", 0, "unexpected `)`"),
            ("()", 1, "unexpected `)`"),
            ("(a == 1", 0, "unclosed `(`: expected `)`"),
            ("(a == 1 b", 8, "expected `&&`, `||` or `)` before `b`"),
            ("a == 1 b", 7, "expected `&&` or `||` before `b`"),
            ("a = 1", 2, "`=` is not an operator; use `==`"),
            ("a & b", 2, "`&` is not an operator; use `&&`"),
            ("a | b", 2, "`|` is not an operator; use `||`"),
            ("a == 'x'", 5, "strings are written in double quotes"),
            ("a == 1 && ", 10, "expected an expression after `&&`"),
            ("a == 1 || || b", 10, "unexpected `||`"),
            ("&& a", 0, "unexpected `&&`"),
            ("> 3", 0, "expected a field or a literal before `>`"),
            ("1 < 2", 0, "expected a field on one side of `<`"),
            (
                "a < b",
                4,
                "cannot compare field `a` with field `b`; compare a field with a literal",
            ),
            (
                "a < 1 < 2",
                6,
                "unexpected `<`: comparisons cannot be chained; join them with `&&`",
            ),
            (
                "!a > 1",
                3,
                "`!` binds tighter than `>`; to negate a comparison write `!(a > b)`",
            ),
            (
                "!(a) > 1",
                5,
                "`!` binds tighter than `>`; to negate a comparison write `!(a > b)`",
            ),
            (
                "(a) > 1",
                4,
                "`>` cannot compare a parenthesised expression; compare a field with a literal",
            ),
            ("!1", 1, "expected a field or `(` after `!`, found `1`"),
            ("!", 1, "expected a field or `(` after `!`, found the end"),
            ("a == @", 5, "unexpected `@`"),
            ("a == é", 5, "unexpected `é`"),
            ("a == -", 5, "unexpected `-`"),
            ("a == .", 5, "unexpected `.`"),
            ("a == 1x", 5, "invalid number `1x`"),
            ("a == 1.2.3", 5, "invalid number `1.2.3`"),
            ("a == 1e", 5, "invalid number `1e`"),
            ("a == 1e999", 5, "number `1e999` is out of range"),
            ("a.b == 1", 1, "unexpected `.`"),
            (
                r#"time == "yesterday""#,
                8,
                r#"expected an RFC 3339 time such as "2024-05-01T12:00:00Z", found "yesterday""#,
            ),
            (
                r#"time == "2024-05-01""#,
                8,
                r#"expected an RFC 3339 time such as "2024-05-01T12:00:00Z", found "2024-05-01""#,
            ),
            (
                "time == true",
                8,
                "`time` is a number or an RFC 3339 string, not a boolean",
            ),
            (
                "time",
                0,
                "`time` is a number or an RFC 3339 string, not a boolean",
            ),
            ("type == 3", 8, "`type` is a string, not a number"),
            (
                "id == false",
                6,
                "`id` is a number or a string, not a boolean",
            ),
            ("id", 0, "`id` is a number or a string, not a boolean"),
            (r#"x == "a""#, 5, "`x` is a number, not a string"),
            ("y != true", 5, "`y` is a number, not a boolean"),
        ];
        for (src, offset, message) in cases {
            assert_eq!(err(src, p), (*offset, message.to_string()), "{src:?}");
        }
        assert_eq!(
            err("lat", Space::Wgs84),
            (0, "`lat` is a number, not a boolean".into())
        );
        assert!(Filter::compile("lat", Space::Planar).is_ok());
        assert!(Filter::compile(r#"x == "a""#, Space::Wgs84).is_ok());
        let e = Filter::compile("a = 1", p).unwrap_err();
        assert_eq!(e.to_string(), "`=` is not an operator; use `==`");
    }

    #[test]
    fn nesting_is_bounded_and_long_chains_are_fine() {
        let deep = format!("{}a{}", "(".repeat(200), ")".repeat(200));
        let (_, msg) = err(&deep, Space::Planar);
        assert!(msg.starts_with("expression nested too deeply"), "{msg}");
        let nots = format!("{}a", "!".repeat(200));
        let (_, msg) = err(&nots, Space::Planar);
        assert!(msg.starts_with("expression nested too deeply"), "{msg}");
        let ok = format!(
            "{}a{}",
            "(".repeat(MAX_DEPTH - 1),
            ")".repeat(MAX_DEPTH - 1)
        );
        assert!(m(&ok, &ev().with("a", true)));
        let chain = vec!["a == 1"; 100_000].join(" && ");
        let f = compile(&chain);
        assert!(f.matches(&ev().with("a", 1.0)));
        assert!(!f.matches(&ev()));
        let chain = vec!["a == 1"; 100_000].join(" || ");
        assert!(compile(&chain).matches(&ev().with("a", 1.0)));
    }

    #[test]
    fn display_round_trips() {
        for src in [
            "speed > 10 && iff == false",
            r#"!(a == "x\"y") || b <= -1e-7 && c >= 1e300 || !!d"#,
            "id == 5 && id != 5.5 && time > 1.5",
            r#"type == "ferry" && time < "2024-01-01T00:00:00Z" || x > 0 && y < 0"#,
            "a == -0",
            "a < 123456789012345678",
        ] {
            let f = compile(src);
            let g = compile(&f.to_string());
            assert_eq!(f.to_string(), g.to_string(), "{src}");
        }
    }

    // ---- Property test: random trees, printed, compiled, against a reference evaluator.

    const FIELDS: &[&str] = &[
        "a", "b", "s", "flag", "id", "time", "type", "x", "y", "lon", "lat",
    ];
    const NUMS: &[f64] = &[-2.5, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 10.0, 1000.0];
    const STRS: &[&str] = &[
        "",
        "a",
        "b",
        "ab",
        "A",
        "q\"x",
        "back\\slash",
        "ferry",
        "cargo",
    ];
    /// Time literals as RFC 3339 text, with their seconds.
    const TIMES: &[(&str, f64)] = &[
        ("1970-01-01T00:00:10Z", 10.0),
        ("1970-01-01T00:00:00.5Z", 0.5),
        ("1969-12-31T23:59:59Z", -1.0),
        ("1970-01-01T01:00:00+01:00", 0.0),
    ];
    const OPS: &[Op] = &[Op::Eq, Op::Ne, Op::Lt, Op::Le, Op::Gt, Op::Ge];

    #[derive(Clone, Debug)]
    enum RLit {
        Num(f64, bool),
        Str(String),
        Time(usize),
        Bool(bool),
    }

    #[derive(Clone, Debug)]
    enum RExpr {
        Cmp {
            field: &'static str,
            op: Op,
            lit: RLit,
            flipped: bool,
        },
        Bare(&'static str),
        Not(Box<RExpr>),
        And(Box<RExpr>, Box<RExpr>),
        Or(Box<RExpr>, Box<RExpr>),
        Paren(Box<RExpr>),
    }

    #[derive(Clone, Debug, PartialEq)]
    enum RVal {
        Num(f64),
        Str(String),
        Bool(bool),
    }

    fn lit_strategy() -> impl Strategy<Value = RLit> {
        prop_oneof![
            (prop::sample::select(NUMS), any::<bool>()).prop_map(|(n, e)| RLit::Num(n, e)),
            prop::sample::select(STRS).prop_map(|s| RLit::Str(s.to_owned())),
            (0..TIMES.len()).prop_map(RLit::Time),
            any::<bool>().prop_map(RLit::Bool),
        ]
    }

    fn expr_strategy() -> impl Strategy<Value = RExpr> {
        let leaf = prop_oneof![
            4 => (
                prop::sample::select(FIELDS),
                prop::sample::select(OPS),
                lit_strategy(),
                any::<bool>()
            )
                .prop_map(|(field, op, lit, flipped)| RExpr::Cmp {
                    field,
                    op,
                    lit,
                    flipped
                }),
            1 => prop::sample::select(FIELDS).prop_map(RExpr::Bare),
        ];
        leaf.prop_recursive(5, 40, 2, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| RExpr::Not(Box::new(e))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| RExpr::And(Box::new(a), Box::new(b))),
                (inner.clone(), inner.clone())
                    .prop_map(|(a, b)| RExpr::Or(Box::new(a), Box::new(b))),
                inner.prop_map(|e| RExpr::Paren(Box::new(e))),
            ]
        })
    }

    fn val_strategy() -> impl Strategy<Value = RVal> {
        prop_oneof![
            prop::sample::select(NUMS).prop_map(RVal::Num),
            prop::sample::select(STRS).prop_map(|s| RVal::Str(s.to_owned())),
            any::<bool>().prop_map(RVal::Bool),
        ]
    }

    fn event_strategy() -> impl Strategy<Value = Event> {
        let id = prop_oneof![
            (-3i64..4).prop_map(Id::Int),
            (0u64..4).prop_map(Id::UInt),
            prop::sample::select(STRS).prop_map(Id::from),
        ];
        let attrs = prop::collection::vec(
            (
                prop::sample::select(&["a", "b", "s", "flag", "lon", "lat", "x"][..]),
                val_strategy(),
            ),
            0..6,
        );
        (
            id,
            prop::sample::select(STRS),
            prop::sample::select(&[-1.0, 0.0, 0.5, 10.0, 11.25][..]),
            prop::option::of((prop::sample::select(NUMS), prop::sample::select(NUMS))),
            attrs,
        )
            .prop_map(|(id, kind, t, loc, attrs)| {
                let mut e = Event::new(id, kind, Timestamp::from_secs_f64(t).unwrap());
                if let Some((x, y)) = loc {
                    e = e.at(x, y);
                }
                for (k, v) in attrs {
                    e = e.with(
                        k,
                        match v {
                            RVal::Num(n) => Value::Num(n),
                            RVal::Str(s) => Value::Str(s.into()),
                            RVal::Bool(b) => Value::Bool(b),
                        },
                    );
                }
                e
            })
    }

    /// Prints a literal as source text.
    fn lit_src(l: &RLit) -> String {
        match l {
            RLit::Num(n, false) => format!("{n}"),
            RLit::Num(n, true) => format!("{n:e}"),
            RLit::Str(s) => Quoted(s).to_string(),
            RLit::Time(i) => Quoted(TIMES[*i].0).to_string(),
            RLit::Bool(b) => b.to_string(),
        }
    }

    /// Binding strength, for printing with as few parentheses as the grammar needs.
    fn prec(e: &RExpr) -> u8 {
        match e {
            RExpr::Or(..) => 1,
            RExpr::And(..) => 2,
            RExpr::Not(_) => 3,
            RExpr::Cmp { .. } => 4,
            RExpr::Bare(_) | RExpr::Paren(_) => 5,
        }
    }

    /// Prints `e` with minimal parentheses, taking whitespace from `ws` in turn.
    fn print(e: &RExpr, ws: &mut impl Iterator<Item = &'static str>, out: &mut String) {
        let mut w = |out: &mut String| out.push_str(ws.next().unwrap_or(" "));
        let sub = |c: &RExpr,
                   paren: bool,
                   out: &mut String,
                   ws: &mut dyn Iterator<Item = &'static str>| {
            let mut ws = ws;
            if paren {
                out.push('(');
                out.push_str(ws.next().unwrap_or(""));
            }
            print(c, &mut ws, out);
            if paren {
                out.push_str(ws.next().unwrap_or(""));
                out.push(')');
            }
        };
        match e {
            RExpr::Cmp {
                field,
                op,
                lit,
                flipped,
            } => {
                let (l, o, r) = if *flipped {
                    (lit_src(lit), op.flip(), field.to_string())
                } else {
                    (field.to_string(), *op, lit_src(lit))
                };
                out.push_str(&l);
                w(out);
                out.push_str(o.as_str());
                w(out);
                out.push_str(&r);
            }
            RExpr::Bare(f) => out.push_str(f),
            RExpr::Not(c) => {
                out.push('!');
                w(out);
                sub(c, prec(c) < 5 && !matches!(**c, RExpr::Not(_)), out, ws);
            }
            RExpr::And(a, b) | RExpr::Or(a, b) => {
                let p = prec(e);
                sub(a, prec(a) < p, out, ws);
                out.push_str(ws.next().unwrap_or(" "));
                out.push_str(if p == 1 { "||" } else { "&&" });
                out.push_str(ws.next().unwrap_or(" "));
                sub(b, prec(b) <= p, out, ws);
            }
            RExpr::Paren(c) => sub(c, true, out, ws),
        }
    }

    /// Would the definition reject `field op lit` at compile time?
    fn cmp_is_error(field: &str, op: Op, lit: &RLit, space: Space) -> bool {
        let (xn, yn) = space.axis_names();
        if op.is_ordering() && matches!(lit, RLit::Bool(_)) {
            return true;
        }
        match field {
            "id" => matches!(lit, RLit::Bool(_)),
            "time" => matches!(lit, RLit::Bool(_)) || matches!(lit, RLit::Str(_)),
            "type" => !matches!(lit, RLit::Str(_) | RLit::Time(_)),
            f if f == xn || f == yn => !matches!(lit, RLit::Num(..)),
            _ => false,
        }
    }

    fn is_error(e: &RExpr, space: Space) -> bool {
        match e {
            RExpr::Cmp { field, op, lit, .. } => cmp_is_error(field, *op, lit, space),
            RExpr::Bare(f) => cmp_is_error(f, Op::Eq, &RLit::Bool(true), space),
            RExpr::Not(c) | RExpr::Paren(c) => is_error(c, space),
            RExpr::And(a, b) | RExpr::Or(a, b) => is_error(a, space) || is_error(b, space),
        }
    }

    /// `x` with every comparison that would not compile replaced by one that does.
    fn repair(x: RExpr, space: Space) -> RExpr {
        let fix = |field: &'static str, op: Op, lit: RLit, flipped: bool| {
            let op = match (op, &lit) {
                (Op::Lt | Op::Le, RLit::Bool(_)) => Op::Eq,
                (Op::Gt | Op::Ge, RLit::Bool(_)) => Op::Ne,
                _ => op,
            };
            let lit = if cmp_is_error(field, op, &lit, space) {
                match field {
                    "time" => RLit::Time(usize::from(flipped)),
                    "type" => RLit::Str("ferry".to_owned()),
                    _ => RLit::Num(if flipped { 0.5 } else { 1.0 }, false),
                }
            } else {
                lit
            };
            RExpr::Cmp {
                field,
                op,
                lit,
                flipped,
            }
        };
        match x {
            RExpr::Cmp {
                field,
                op,
                lit,
                flipped,
            } => fix(field, op, lit, flipped),
            RExpr::Bare(f) if cmp_is_error(f, Op::Eq, &RLit::Bool(true), space) => {
                fix(f, Op::Eq, RLit::Bool(true), false)
            }
            RExpr::Bare(f) => RExpr::Bare(f),
            RExpr::Not(c) => RExpr::Not(Box::new(repair(*c, space))),
            RExpr::Paren(c) => RExpr::Paren(Box::new(repair(*c, space))),
            RExpr::And(a, b) => {
                RExpr::And(Box::new(repair(*a, space)), Box::new(repair(*b, space)))
            }
            RExpr::Or(a, b) => RExpr::Or(Box::new(repair(*a, space)), Box::new(repair(*b, space))),
        }
    }

    /// The field's value per the definition, `None` if missing.
    fn field_value(e: &Event, field: &str, space: Space) -> Option<RVal> {
        let (xn, yn) = space.axis_names();
        match field {
            "id" => Some(match &e.id {
                Id::Int(i) => RVal::Num(*i as f64),
                Id::UInt(u) => RVal::Num(*u as f64),
                Id::Str(s) => RVal::Str(s.to_string()),
            }),
            "time" => Some(RVal::Num(e.time.micros() as f64 / 1e6)),
            "type" => Some(RVal::Str(e.kind.to_string())),
            f if f == xn => e.location.map(|p| RVal::Num(p.x)),
            f if f == yn => e.location.map(|p| RVal::Num(p.y)),
            f => e.attr(f).map(|v| match v {
                Value::Num(n) => RVal::Num(*n),
                Value::Str(s) => RVal::Str(s.to_string()),
                Value::Bool(b) => RVal::Bool(*b),
            }),
        }
    }

    fn reference(x: &RExpr, e: &Event, space: Space) -> bool {
        match x {
            RExpr::Cmp { field, op, lit, .. } => ref_cmp(e, field, *op, lit, space),
            RExpr::Bare(f) => ref_cmp(e, f, Op::Eq, &RLit::Bool(true), space),
            RExpr::Not(c) => !reference(c, e, space),
            RExpr::Paren(c) => reference(c, e, space),
            RExpr::And(a, b) => reference(a, e, space) && reference(b, e, space),
            RExpr::Or(a, b) => reference(a, e, space) || reference(b, e, space),
        }
    }

    fn ref_cmp(e: &Event, field: &str, op: Op, lit: &RLit, space: Space) -> bool {
        let lit = match lit {
            RLit::Num(n, _) => RVal::Num(*n),
            RLit::Str(s) => RVal::Str(s.clone()),
            RLit::Time(i) if field == "time" => RVal::Num(TIMES[*i].1),
            RLit::Time(i) => RVal::Str(TIMES[*i].0.to_owned()),
            RLit::Bool(b) => RVal::Bool(*b),
        };
        let Some(v) = field_value(e, field, space) else {
            return false;
        };
        let ord = match (&v, &lit) {
            (RVal::Num(a), RVal::Num(b)) => a.partial_cmp(b),
            (RVal::Str(a), RVal::Str(b)) => Some(a.as_bytes().cmp(b.as_bytes())),
            (RVal::Bool(a), RVal::Bool(b)) => Some(a.cmp(b)),
            _ => None,
        };
        match ord {
            None => false,
            Some(o) => match op {
                Op::Eq => o == Ordering::Equal,
                Op::Ne => o != Ordering::Equal,
                Op::Lt => o == Ordering::Less,
                Op::Le => o != Ordering::Greater,
                Op::Gt => o == Ordering::Greater,
                Op::Ge => o != Ordering::Less,
            },
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(3000))]

        #[test]
        fn compiled_matches_reference(
            x in expr_strategy(),
            events in prop::collection::vec(event_strategy(), 1..6),
            wgs in any::<bool>(),
            ws in prop::collection::vec(prop::sample::select(&["", " ", "  ", "\t", "\n "][..]), 0..64),
        ) {
            let space = if wgs { Space::Wgs84 } else { Space::Planar };
            let mut src = String::new();
            print(&x, &mut ws.iter().copied(), &mut src);
            let compiled = Filter::compile(&src, space);
            if is_error(&x, space) {
                prop_assert!(compiled.is_err(), "{} should not compile", src);
            } else {
                prop_assert!(compiled.is_ok(), "{} should compile: {:?}", src, compiled);
            }
            // Evaluate a version of the tree that compiles.
            let x = repair(x, space);
            prop_assert!(!is_error(&x, space));
            let mut src = String::new();
            print(&x, &mut ws.iter().copied(), &mut src);
            let compiled = Filter::compile(&src, space);
            let f = match compiled {
                Ok(f) => f,
                Err(e) => return Err(TestCaseError::fail(format!("{src:?}: {} at {}", e.message, e.offset))),
            };
            let again = Filter::compile(&f.to_string(), space).map_err(|e| TestCaseError::fail(format!("{f}: {e}")))?;
            prop_assert_eq!(again.to_string(), f.to_string());
            for e in &events {
                let want = reference(&x, e, space);
                prop_assert_eq!(f.matches(e), want, "{} on {:?}", src, e);
                prop_assert_eq!(again.matches(e), want, "{} on {:?}", f, e);
            }
        }

        #[test]
        fn never_panics(src in "[a-z0-9 ()!=<>&|\"\\\\.eE+-]{0,40}") {
            let _ = Filter::compile(&src, Space::Planar).map(|f| f.matches(&ev()));
        }

        #[test]
        fn never_panics_on_any_text(src in any::<String>()) {
            if let Err(e) = Filter::compile(&src, Space::Wgs84) {
                prop_assert!(e.offset <= src.len());
                prop_assert!(src.is_char_boundary(e.offset));
            }
        }
    }
}
