//! The parser: C precedence and associativity, depth-limited recursion.

use super::ast::*;
use super::lex::{Tok, Token};

// ---------------------------------------------------------------------------------------------
// Parser

pub(super) struct Parser<'s> {
    pub(super) src: &'s str,
    pub(super) toks: Vec<Token>,
    pub(super) at: usize,
    pub(super) nesting: u32,
}

pub(super) type PResult<T> = Result<T, String>;

impl Parser<'_> {
    pub(super) fn peek(&self) -> &Token {
        &self.toks[self.at]
    }
    pub(super) fn bump(&mut self) -> Token {
        let t = self.toks[self.at].clone();
        if self.at + 1 < self.toks.len() {
            self.at += 1;
        }
        t
    }
    pub(super) fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek().tok, Tok::Punct(q) if q == p)
    }
    pub(super) fn err(&self, pos: usize, msg: impl std::fmt::Display) -> String {
        format!("column {}: {msg}", column(self.src, pos))
    }
    pub(super) fn found(&self) -> String {
        let t = self.peek();
        t.tok.describe(self.src, t.pos, t.end)
    }
    pub(super) fn node(&self, pos: usize, kind: Kind) -> PResult<Node> {
        let below = match &kind {
            Kind::A | Kind::B | Kind::Int(_) | Kind::Float(_) => 0,
            Kind::Unary(_, x) => x.depth,
            Kind::Binary(_, x, y) => x.depth.max(y.depth),
            Kind::Cond(c, x, y) => c.depth.max(x.depth).max(y.depth),
            Kind::Call(_, args) => args.iter().map(|n| n.depth).max().unwrap_or(0),
        };
        let depth = below + 1;
        if depth > MAX_DEPTH {
            return Err(self.err(pos, too_deep()));
        }
        Ok(Node { pos, depth, kind })
    }
    pub(super) fn enter(&mut self) -> PResult<()> {
        self.nesting += 1;
        if self.nesting > MAX_DEPTH {
            return Err(self.err(self.peek().pos, too_deep()));
        }
        Ok(())
    }
    pub(super) fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// conditional-expression: logical-or [ `?` conditional `:` conditional ]
    pub(super) fn ternary(&mut self) -> PResult<Node> {
        self.enter()?;
        let cond = self.binary(0)?;
        let out = if self.is_punct("?") {
            let q = self.bump().pos;
            let then = self.ternary()?;
            if !self.is_punct(":") {
                return Err(self.err(
                    self.peek().pos,
                    format!(
                        "expected `:` of the `?` at column {}, found {}",
                        column(self.src, q),
                        self.found()
                    ),
                ));
            }
            self.bump();
            let otherwise = self.ternary()?;
            self.node(
                q,
                Kind::Cond(Box::new(cond), Box::new(then), Box::new(otherwise)),
            )?
        } else {
            cond
        };
        self.leave();
        Ok(out)
    }

    pub(super) fn binary(&mut self, level: usize) -> PResult<Node> {
        if level == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let op = match self.peek().tok {
                Tok::Punct(p) => LEVELS[level].iter().find(|(s, _)| *s == p).map(|e| e.1),
                _ => None,
            };
            let Some(op) = op else { break };
            let pos = self.bump().pos;
            let rhs = self.binary(level + 1)?;
            lhs = self.node(pos, Kind::Binary(op, Box::new(lhs), Box::new(rhs)))?;
        }
        Ok(lhs)
    }

    pub(super) fn unary(&mut self) -> PResult<Node> {
        let op = match self.peek().tok {
            Tok::Punct("-") => UnOp::Neg,
            Tok::Punct("+") => UnOp::Plus,
            Tok::Punct("!") => UnOp::Not,
            Tok::Punct("~") => UnOp::BitNot,
            _ => return self.primary(),
        };
        let pos = self.bump().pos;
        self.enter()?;
        let x = self.unary()?;
        self.leave();
        self.node(pos, Kind::Unary(op, Box::new(x)))
    }

    pub(super) fn primary(&mut self) -> PResult<Node> {
        let t = self.peek().clone();
        match t.tok {
            Tok::Int(v) => {
                self.bump();
                self.node(t.pos, Kind::Int(v))
            }
            Tok::Float(v) => {
                self.bump();
                self.node(t.pos, Kind::Float(v))
            }
            Tok::Punct("(") => {
                self.bump();
                let inner = self.ternary()?;
                if !self.is_punct(")") {
                    return Err(self.err(
                        self.peek().pos,
                        format!(
                            "expected `)` to close the `(` at column {}, found {}",
                            column(self.src, t.pos),
                            self.found()
                        ),
                    ));
                }
                self.bump();
                Ok(inner)
            }
            Tok::Ident(ref name) => {
                self.bump();
                let kind = match name.as_str() {
                    "a" => Kind::A,
                    "b" => Kind::B,
                    _ => return self.call(name, t.pos),
                };
                if self.is_punct("(") {
                    return Err(self.err(
                        self.peek().pos,
                        format!("`{name}` is an operand, not a function"),
                    ));
                }
                self.node(t.pos, kind)
            }
            _ => Err(self.err(
                t.pos,
                format!(
                    "expected an operand (a, b, a number, a call or `(`), found {}",
                    self.found()
                ),
            )),
        }
    }

    pub(super) fn call(&mut self, name: &str, pos: usize) -> PResult<Node> {
        let Some((_, func, arity, _, sig)) = FUNCS.into_iter().find(|e| e.0 == name) else {
            return Err(self.err(
                pos,
                format!("unknown name `{name}`; the host reference knows {KNOWN}"),
            ));
        };
        if !self.is_punct("(") {
            return Err(self.err(pos, format!("`{name}` is a function: call it as {sig}")));
        }
        self.bump();
        let mut args = Vec::new();
        if !self.is_punct(")") {
            loop {
                args.push(self.ternary()?);
                if self.is_punct(",") {
                    self.bump();
                } else if self.is_punct(")") {
                    break;
                } else {
                    return Err(self.err(
                        self.peek().pos,
                        format!(
                            "expected `,` or `)` in the call of `{name}` at column {}, found {}",
                            column(self.src, pos),
                            self.found()
                        ),
                    ));
                }
            }
        }
        self.bump();
        if args.len() != arity {
            let s = if arity == 1 { "" } else { "s" };
            return Err(self.err(
                pos,
                format!(
                    "`{name}` takes {arity} argument{s} ({sig}), found {}",
                    args.len()
                ),
            ));
        }
        self.node(pos, Kind::Call(func, args))
    }
}

pub(super) fn too_deep() -> String {
    format!("expression nested too deeply (more than {MAX_DEPTH} levels)")
}
