#include "server/scheduler/slicer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <limits>
#include <map>
#include <set>

// The rewriter works on tokens, without running the preprocessor: the server has no OpenCL C
// preprocessor of its own, and the driver's one cannot report where it expanded what. So it
// accepts only programs whose structure is visible in the tokens, and backs that up twice:
//   - every use of a rewritten built-in goes through a #define that names the hidden parameter,
//     so a use the rewriter did not see is a compile error, never a silently wrong value;
//   - CheckBuiltKernels compares the kernels the compiler saw with the ones found here.

namespace rgpu::slicer {
namespace {

// ---------------------------------------------------------------------------------------------
// Tokens.

enum class TokenKind { kIdentifier, kNumber, kString, kChar, kPunct };

struct Token {
  TokenKind kind;
  std::string_view text;
  size_t offset;  // into the source (or into the option string for -D macros)

  bool Is(std::string_view s) const { return text == s; }
  bool IsIdentifier() const { return kind == TokenKind::kIdentifier; }
};

// A preprocessor directive line. Its tokens are kept apart from the program's tokens, which
// are read as if every conditional branch were compiled: a program whose structure depends on
// which branch is taken then looks unbalanced or contradictory and is refused.
struct Directive {
  std::string_view keyword;      // "define", "include", "ifdef", ...; empty for a lone '#'
  std::vector<Token> tokens;     // after the keyword
  size_t position;               // number of program tokens before the directive
};

struct Lexed {
  std::vector<Token> tokens;
  std::vector<Directive> directives;
};

bool IsIdentifierStart(unsigned char c) {
  // '$' and non-ASCII bytes are identifier characters for clang; treating them as such keeps
  // "x$get_group_id" one (harmless) name instead of exposing a built-in's name.
  return std::isalpha(c) || c == '_' || c == '$' || c >= 0x80;
}
bool IsIdentifierChar(unsigned char c) { return IsIdentifierStart(c) || std::isdigit(c); }

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {
    // A UTF-8 byte order mark would otherwise join the first name.
    if (src_.starts_with("\xEF\xBB\xBF")) pos_ = 3;
  }

  Result<Lexed> Run() {
    Lexed out;
    bool line_start = true;
    Directive* directive = nullptr;
    while (pos_ < src_.size()) {
      const char c = src_[pos_];
      if (c == '\n') {
        ++pos_;
        line_start = true;
        directive = nullptr;
        continue;
      }
      if (SkipSplice()) continue;
      if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
        ++pos_;
        continue;
      }
      if (c == '/' && Peek(1) == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') {
          if (!SkipSplice()) ++pos_;
        }
        continue;
      }
      if (c == '/' && Peek(1) == '*') {
        const size_t end = src_.find("*/", pos_ + 2);
        if (end == std::string_view::npos) return Refused("unterminated /* comment");
        pos_ = end + 2;
        continue;
      }
      if (c == '#' && line_start && directive == nullptr) {
        ++pos_;
        out.directives.push_back({{}, {}, out.tokens.size()});
        directive = &out.directives.back();
        line_start = false;
        // The keyword is the first token after '#'; it is read like any identifier below.
        continue;
      }
      line_start = false;
      Result<Token> token = Next();
      if (!token.ok()) return token.status();
      if (directive != nullptr) {
        if (directive->keyword.empty() && directive->tokens.empty() &&
            token.value().IsIdentifier()) {
          directive->keyword = token.value().text;
        } else {
          directive->tokens.push_back(token.value());
        }
      } else {
        out.tokens.push_back(token.value());
      }
    }
    return out;
  }

 private:
  char Peek(size_t ahead) const {
    return pos_ + ahead < src_.size() ? src_[pos_ + ahead] : '\0';
  }

  // A backslash-newline joins two lines; between tokens it is nothing.
  bool SkipSplice() {
    if (src_[pos_] != '\\') return false;
    if (Peek(1) == '\n') {
      pos_ += 2;
      return true;
    }
    if (Peek(1) == '\r' && Peek(2) == '\n') {
      pos_ += 3;
      return true;
    }
    return false;
  }

  bool AtSplice() const {
    return src_[pos_] == '\\' && (Peek(1) == '\n' || (Peek(1) == '\r' && Peek(2) == '\n'));
  }

  Result<Token> Next() {
    const size_t start = pos_;
    const unsigned char c = src_[pos_];
    if (IsIdentifierStart(c) || std::isdigit(c) || (c == '.' && std::isdigit(static_cast<unsigned char>(Peek(1))))) {
      const bool number = !IsIdentifierStart(c);
      while (pos_ < src_.size()) {
        const unsigned char d = src_[pos_];
        // An exponent's sign belongs to the number (1e-3, 0x1p+4).
        const bool exponent_sign = number && (d == '+' || d == '-') && pos_ > start &&
                                   std::string_view("eEpP").find(src_[pos_ - 1]) != std::string_view::npos;
        if (exponent_sign || IsIdentifierChar(d) || (number && d == '.')) {
          ++pos_;
        } else {
          break;
        }
      }
      // A name cut by a line splice would be read as two names here but one by the compiler.
      if (pos_ < src_.size() && AtSplice()) {
        return Refused("a line splice (backslash-newline) right after a token");
      }
      return Token{number ? TokenKind::kNumber : TokenKind::kIdentifier,
                   src_.substr(start, pos_ - start), start};
    }
    if (c == '"' || c == '\'') {
      ++pos_;
      while (pos_ < src_.size() && static_cast<unsigned char>(src_[pos_]) != c) {
        if (src_[pos_] == '\n') return Refused("unterminated string or character literal");
        pos_ += src_[pos_] == '\\' ? 2 : 1;
      }
      if (pos_ >= src_.size()) return Refused("unterminated string or character literal");
      ++pos_;
      return Token{c == '"' ? TokenKind::kString : TokenKind::kChar,
                   src_.substr(start, pos_ - start), start};
    }
    // Digraphs would hide braces and '#' from this reader.
    static constexpr std::array<std::string_view, 5> kDigraphs = {"<%", "%>", "<:", ":>", "%:"};
    for (std::string_view d : kDigraphs) {
      if (src_.substr(pos_, 2) == d) return Refused("digraphs (<% %> <: :> %:)");
    }
    // Only the multi-character punctuators the rewriter looks at are joined.
    for (std::string_view p : {std::string_view("..."), std::string_view("->"),
                               std::string_view("##")}) {
      if (src_.substr(pos_, p.size()) == p) {
        pos_ += p.size();
        return Token{TokenKind::kPunct, p, start};
      }
    }
    ++pos_;
    return Token{TokenKind::kPunct, src_.substr(start, 1), start};
  }

  std::string_view src_;
  size_t pos_ = 0;
};

// ---------------------------------------------------------------------------------------------
// What the rewriter knows about OpenCL C.

// The built-ins whose value differs between a slice or a preemptible run and the whole launch.
// In a slice get_global_id is right already (the slice's offset places its work-items), but in
// a preemptible run work-groups take launch-wide group ids from a counter, so it is rewritten
// too. Local ids, local sizes (both keep the launch's local size) and get_work_dim are the same.
constexpr std::array<std::string_view, 6> kRewrittenBuiltins = {
    "get_group_id", "get_num_groups", "get_global_size", "get_global_offset",
    "get_global_linear_id", "get_global_id"};

bool IsRewrittenBuiltin(std::string_view name) {
  return std::find(kRewrittenBuiltins.begin(), kRewrittenBuiltins.end(), name) !=
         kRewrittenBuiltins.end();
}

// Names whose use makes a kernel depend on the work-group size, which the driver picks when
// the application passes no local size.
bool ObservesWorkGroups(std::string_view name) {
  // Attribute names may be spelled __name__.
  if (name.size() > 4 && name.starts_with("__") && name.ends_with("__")) {
    name = name.substr(2, name.size() - 4);
  }
  static constexpr std::array<std::string_view, 15> kNames = {
      "get_local_id", "get_local_size", "get_enqueued_local_size", "get_group_id",
      "get_num_groups", "get_local_linear_id", "barrier", "local", "__local",
      "async_work_group_copy", "async_work_group_strided_copy", "wait_group_events",
      "reqd_work_group_size", "get_num_sub_groups", "get_max_sub_group_size"};
  static constexpr std::array<std::string_view, 6> kPrefixes = {
      "work_group_", "sub_group_", "get_sub_group_", "get_enqueued_num_sub_groups",
      "intel_sub_group", "intel_reqd_sub_group_size"};
  if (std::find(kNames.begin(), kNames.end(), name) != kNames.end()) return true;
  return std::any_of(kPrefixes.begin(), kPrefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

bool IsKernelQualifier(std::string_view name) { return name == "kernel" || name == "__kernel"; }

// Device-side enqueue starts child launches whose blocks call the built-ins about the child,
// not about the parent; the textual rewrite cannot tell the two apart.
bool IsDeviceEnqueue(std::string_view name) {
  return name == "enqueue_kernel" || name == "enqueue_marker" || name == "get_default_queue";
}

constexpr std::string_view kReservedPrefix = "__rgpu";

// Code placed before the application's source. The helpers are defined before the #defines,
// so inside them the names still mean the real built-ins. They read the hidden argument only
// for a sliced launch (s3 != 0) and a dimension the launch has: for any other dimension a slice
// (launched with the same work_dim) gets from the real built-in what the whole launch would,
// whatever the device returns there.
constexpr std::string_view kPrelude = R"CLC(/* Added by rgpu: kernels see the whole launch when it runs in slices or preemptible runs (docs/scheduling.md). */
bool __rgpu_sliced(ulong16 l, uint d) { return l.s3 != 0 && d < get_work_dim(); }
bool __rgpu_run(ulong16 l, uint d) { return l.s3 == 2 && d < get_work_dim(); }
size_t __rgpu_pick(ulong4 v, uint d) { return (size_t)(d == 0u ? v.x : d == 1u ? v.y : v.z); }
size_t __rgpu_get_global_offset(ulong16 l, uint d) {
  return __rgpu_sliced(l, d) ? __rgpu_pick(l.s0123, d) : get_global_offset(d);
}
size_t __rgpu_get_global_size(ulong16 l, uint d) {
  return __rgpu_sliced(l, d) ? __rgpu_pick(l.s4567, d) : get_global_size(d);
}
size_t __rgpu_get_num_groups(ulong16 l, uint d) {
  return __rgpu_sliced(l, d) ? __rgpu_pick(l.s89ab, d) : get_num_groups(d);
}
size_t __rgpu_get_group_id(ulong16 l, uint d) {
  if (__rgpu_run(l, d)) return __rgpu_pick(l.scdef, d);
  return get_group_id(d) + (__rgpu_sliced(l, d) ? __rgpu_pick(l.scdef, d) : 0);
}
size_t __rgpu_get_global_id(ulong16 l, uint d) {
  if (!__rgpu_run(l, d)) return get_global_id(d);
  return __rgpu_pick(l.scdef, d) * get_local_size(d) + get_local_id(d) + __rgpu_pick(l.s0123, d);
}
size_t __rgpu_get_global_linear_id(ulong16 l) {
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 200
  if (l.s3 == 0) return get_global_linear_id();
#endif
  /* The definition in the OpenCL C specification, with the launch's sizes and offsets. */
  return ((__rgpu_get_global_id(l, 2) - __rgpu_get_global_offset(l, 2)) * __rgpu_get_global_size(l, 1) +
          (__rgpu_get_global_id(l, 1) - __rgpu_get_global_offset(l, 1))) * __rgpu_get_global_size(l, 0) +
         (__rgpu_get_global_id(l, 0) - __rgpu_get_global_offset(l, 0));
}
/* A preemptible run (s3 == 2): each work-group takes the next launch-wide group id from the
   counter c[1], unless the stop flag c[0] is set or the run's limit c[2] is reached; then the
   whole group returns before running any of the kernel. Claimed ids are contiguous, so the
   server resumes from the counter. */
ulong16 __rgpu_claim(ulong16 l, volatile __global uint* c, __local uint* g) {
  if (l.s3 != 2) return l;
  if (get_local_id(0) == 0 && get_local_id(1) == 0 && get_local_id(2) == 0) {
    uint id = 0xffffffffu;
    if (c[0] == 0u) {
      id = atomic_inc(&c[1]);
      if (id >= c[2]) id = 0xffffffffu;
    }
    g[0] = id;
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  uint id = g[0];
  if (id == 0xffffffffu) {
    l.s3 = 3;
    return l;
  }
  l.sc = id % l.s8;
  l.sd = (id / l.s8) % l.s9;
  l.se = id / (l.s8 * l.s9);
  return l;
}
#define get_global_offset(d) __rgpu_get_global_offset(__rgpu_launch, (d))
#define get_global_size(d) __rgpu_get_global_size(__rgpu_launch, (d))
#define get_num_groups(d) __rgpu_get_num_groups(__rgpu_launch, (d))
#define get_group_id(d) __rgpu_get_group_id(__rgpu_launch, (d))
#define get_global_id(d) __rgpu_get_global_id(__rgpu_launch, (d))
#define get_global_linear_id() __rgpu_get_global_linear_id(__rgpu_launch)
#line 1
)CLC";

// Slots of the hidden ulong16, shared by the prelude above and HiddenArgForSlice.
constexpr int kSlotOffset = 0;
constexpr int kSlotSliced = 3;
constexpr int kSlotGlobal = 4;
constexpr int kSlotNumGroups = 8;
constexpr int kSlotGroupBase = 12;
// s3 values: 0 whole launch, 1 slice, 2 preemptible run (3: a work-group of a run that stops).
constexpr cl_ulong kModeSlice = 1, kModeRun = 2;

// What a kernel body begins with: a work-group of a preemptible run claims its group id.
constexpr std::string_view kKernelPrologue =
    " __local uint __rgpu_group[1]; __rgpu_launch = __rgpu_claim(__rgpu_launch, __rgpu_ctl, "
    "__rgpu_group); if (__rgpu_launch.s3 == 3) return;";

// ---------------------------------------------------------------------------------------------
// The program's structure.

struct Macro {
  std::string name;
  std::vector<Token> body;
  bool from_options = false;  // -D in the build options: visible, but not editable
};

// A function definition or prototype at program scope, as token indices.
struct Function {
  std::string_view name;
  size_t specifiers_begin;  // first token of the declaration
  size_t name_index;
  size_t params_open, params_close;
  size_t body_open = 0, body_close = 0;  // only for definitions
  bool is_definition = false;
  bool is_kernel = false;
};

// A text change to the application's source: replace [begin, end) by text.
struct Edit {
  size_t begin, end;
  std::string text;
};

std::string Quote(std::string_view s) { return "'" + std::string(s) + "'"; }

// Matches (), [] and {}: for each bracket the index of its partner (0 for other tokens).
Result<std::vector<size_t>> MatchBrackets(std::span<const Token> tokens) {
  std::vector<size_t> match(tokens.size(), 0);
  std::vector<size_t> open;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string_view t = tokens[i].text;
    if (tokens[i].kind != TokenKind::kPunct) continue;
    if (t == "(" || t == "[" || t == "{") {
      open.push_back(i);
    } else if (t == ")" || t == "]" || t == "}") {
      static constexpr std::string_view kPairs = "()[]{}";
      const char want = kPairs[kPairs.find(t[0]) - 1];
      if (open.empty() || tokens[open.back()].text[0] != want) {
        return Refused("unbalanced " + Quote(t) + " (reading every #if branch)");
      }
      match[open.back()] = i;
      match[i] = open.back();
      open.pop_back();
    }
  }
  if (!open.empty()) {
    return Refused("unbalanced " + Quote(tokens[open.back()].text) + " (reading every #if branch)");
  }
  return match;
}

// Parses "-D name", "-Dname=value" from clBuildProgram options. Options are split at
// whitespace, as OpenCL implementations do.
Result<std::vector<Macro>> MacrosFromOptions(std::string_view options) {
  std::vector<std::string_view> words;
  for (size_t i = 0; i < options.size();) {
    while (i < options.size() && std::isspace(static_cast<unsigned char>(options[i]))) ++i;
    const size_t start = i;
    while (i < options.size() && !std::isspace(static_cast<unsigned char>(options[i]))) ++i;
    if (i > start) words.push_back(options.substr(start, i - start));
  }
  std::vector<Macro> macros;
  for (size_t w = 0; w < words.size(); ++w) {
    if (!words[w].starts_with("-D")) continue;
    std::string_view definition = words[w].substr(2);
    if (definition.empty()) {
      if (w + 1 == words.size()) return Refused("build option -D without a name");
      definition = words[++w];
    }
    const size_t eq = definition.find('=');
    Macro macro;
    std::string_view name = definition.substr(0, eq);
    // A function-like macro from the command line: -D'F(x)=...'.
    if (name.find('(') != std::string_view::npos) name = name.substr(0, name.find('('));
    macro.name = std::string(name);
    macro.from_options = true;
    if (eq != std::string_view::npos) {
      Result<Lexed> body = Lexer(definition.substr(eq + 1)).Run();
      if (!body.ok())
        return Refused("build option -D" + std::string(definition) + ": " +
                       body.status().message());
      if (!body.value().directives.empty()) {
        return Refused("build option -D" + std::string(definition) + " holds a '#'");
      }
      // The tokens view `options`, which outlives the rewrite.
      macro.body = body.value().tokens;
    }
    macros.push_back(std::move(macro));
  }
  return macros;
}

class Rewriter {
 public:
  Rewriter(std::string_view source, std::string_view options)
      : source_(source), options_(options) {}

  Result<RewrittenProgram> Run() {
    // Trigraphs are replaced before anything else, even inside comments; "??/" can splice lines.
    static constexpr std::string_view kTrigraphEnds = "=/'()!<>-";
    for (size_t p = source_.find("??"); p != std::string_view::npos;
         p = source_.find("??", p + 1)) {
      if (p + 2 < source_.size() && kTrigraphEnds.find(source_[p + 2]) != std::string_view::npos) {
        return Refused("trigraphs (??x)");
      }
    }
    Result<Lexed> lexed = Lexer(source_).Run();
    if (!lexed.ok()) return lexed.status();
    lexed_ = std::move(lexed.value());
    tokens_ = lexed_.tokens;

    for (Status s : {ReadMacros(), CheckNames()}) {
      if (!s.ok()) return s;
    }
    Result<std::vector<size_t>> match = MatchBrackets(tokens_);
    if (!match.ok()) return match.status();
    match_ = std::move(match.value());

    for (Status s : {FindFunctions(), MarkFunctionsNeedingLaunch(), CheckSignatures(),
                     EditSignatures(), EditCalls()}) {
      if (!s.ok()) return s;
    }
    Result<std::vector<KernelInfo>> kernels = DescribeKernels();
    if (!kernels.ok()) return kernels.status();

    RewrittenProgram out;
    out.kernels = std::move(kernels.value());
    out.source = ApplyEdits();
    std::set<std::string_view> helpers;
    for (const Function& f : functions_) {
      if (!f.is_kernel && needs_launch_.contains(f.name)) helpers.insert(f.name);
    }
    out.helpers_given_launch.assign(helpers.begin(), helpers.end());
    return out;
  }

 private:
  // Collects macros from #define lines and -D options, and refuses directives that would change
  // what the rewriter sees: includes, redefinitions of the rewritten built-ins, token pasting.
  Status ReadMacros() {
    Result<std::vector<Macro>> from_options = MacrosFromOptions(options_);
    if (!from_options.ok()) return from_options.status();
    macros_ = std::move(from_options.value());

    for (const Directive& d : lexed_.directives) {
      if (d.keyword == "include" || d.keyword == "import" || d.keyword == "include_next") {
        return Refused("#" + std::string(d.keyword) +
                       ": the included file is not visible to the rewriter");
      }
      for (const Token& t : d.tokens) {
        if (IsRewrittenBuiltin(t.text) && d.keyword != "define") {
          return Refused("#" + std::string(d.keyword) + " names the built-in " + Quote(t.text) +
                         ", which the rewrite redefines");
        }
      }
      if (d.keyword != "define") continue;
      if (d.tokens.empty() || !d.tokens[0].IsIdentifier()) {
        return Refused("a #define without a name");
      }
      Macro macro;
      macro.name = std::string(d.tokens[0].text);
      // Function-like only when '(' touches the name; the body starts after the ')'.
      auto body_begin = d.tokens.begin() + 1;
      if (d.tokens.size() > 1 && d.tokens[1].Is("(") &&
          d.tokens[1].offset == d.tokens[0].offset + d.tokens[0].text.size()) {
        body_begin = std::find_if(body_begin, d.tokens.end(),
                                  [](const Token& t) { return t.Is(")"); });
        if (body_begin == d.tokens.end()) {
          return Refused("#define " + macro.name + " without ')' after its parameters");
        }
        ++body_begin;
      }
      macro.body.assign(body_begin, d.tokens.end());
      macros_.push_back(std::move(macro));
    }

    for (const Macro& m : macros_) {
      const std::string where = (m.from_options ? "build option macro " : "macro ") + Quote(m.name);
      if (IsRewrittenBuiltin(m.name)) {
        return Refused(where + " redefines a built-in that the rewrite redefines");
      }
      if (IsKernelQualifier(m.name)) return Refused(where + " redefines the kernel qualifier");
      for (size_t i = 0; i < m.body.size(); ++i) {
        const Token& t = m.body[i];
        if (IsKernelQualifier(t.text)) {
          return Refused(where + " hides a kernel signature ('" + std::string(t.text) +
                         "' in a macro)");
        }
        if (t.Is("##")) {
          return Refused(where + " pastes tokens (##): the names it makes are not visible");
        }
        if (IsRewrittenBuiltin(t.text) && (i + 1 == m.body.size() || !m.body[i + 1].Is("("))) {
          return Refused(where + " names " + Quote(t.text) + " without calling it");
        }
      }
    }
    return Status::Ok();
  }

  // Checks on names anywhere: the program, directives and -D macros.
  Status CheckNames() {
    auto check = [](std::span<const Token> tokens, bool in_program) -> Status {
      for (size_t i = 0; i < tokens.size(); ++i) {
        const std::string_view t = tokens[i].text;
        if (!tokens[i].IsIdentifier()) continue;
        if (t.starts_with(kReservedPrefix)) {
          return Refused("the name " + Quote(t) + " is reserved for the rewrite");
        }
        if (IsDeviceEnqueue(t)) {
          return Refused("device-side enqueue (" + std::string(t) +
                         "): child launches would read the parent's launch values");
        }
        // "(get_group_id)(0)" calls the real built-in past the #define: refuse any use that is
        // not a plain call. (Macro bodies got the same check in ReadMacros.)
        if (in_program && IsRewrittenBuiltin(t) &&
            (i + 1 == tokens.size() || !tokens[i + 1].Is("("))) {
          return Refused(Quote(t) + " used other than as a plain call");
        }
      }
      return Status::Ok();
    };
    if (Status s = check(tokens_, true); !s.ok()) return s;
    for (const Directive& d : lexed_.directives) {
      if (Status s = check(d.tokens, false); !s.ok()) return s;
    }
    for (const Macro& m : macros_) {
      if (m.name.starts_with(kReservedPrefix)) {
        return Refused("the name " + Quote(m.name) + " is reserved for the rewrite");
      }
      if (!m.from_options) continue;
      if (Status s = check(m.body, false); !s.ok()) return s;
    }
    return Status::Ok();
  }

  // Finds function definitions and prototypes at program scope.
  Status FindFunctions() {
    size_t item_begin = 0;
    size_t i = 0;
    while (i < tokens_.size()) {
      const Token& t = tokens_[i];
      if (t.Is("(") || t.Is("[")) {
        i = match_[i] + 1;
        continue;
      }
      if (t.Is(";")) {
        if (Status s = ReadDeclaration(item_begin, i); !s.ok()) return s;
        item_begin = ++i;
        continue;
      }
      if (!t.Is("{")) {
        ++i;
        continue;
      }
      const size_t close = match_[i];
      Result<std::optional<Function>> f = ReadDefinition(item_begin, i);
      if (!f.ok()) return f.status();
      if (f.value()) {
        functions_.push_back(*f.value());
        item_begin = close + 1;
      }
      // Otherwise a struct, union, enum or initializer: the declaration ends at its ';'.
      i = close + 1;
    }
    if (item_begin < tokens_.size()) {
      return Refused("the program ends inside a declaration (missing ';')");
    }

    // Every kernel qualifier must belong to a declaration found above; one anywhere else means
    // a structure the reader did not understand.
    std::set<size_t> understood;
    for (const Function& f : functions_) {
      for (size_t k = f.specifiers_begin; k < f.name_index; ++k) understood.insert(k);
    }
    for (size_t k = 0; k < tokens_.size(); ++k) {
      if (IsKernelQualifier(tokens_[k].text) && !understood.contains(k)) {
        return Refused(
            "a kernel qualifier outside a function declaration the rewriter "
            "understands (near offset " +
            std::to_string(tokens_[k].offset) + ")");
      }
    }
    return Status::Ok();
  }

  // `brace` is a '{' at program scope. Returns the function it defines, or nothing when it
  // opens an aggregate or initializer.
  Result<std::optional<Function>> ReadDefinition(size_t begin, size_t brace) {
    if (brace == begin) return std::optional<Function>();
    size_t j = brace - 1;
    // Skip GNU attributes between the parameter list and the body.
    while (tokens_[j].Is(")") && match_[j] > begin &&
           tokens_[match_[j] - 1].Is("__attribute__") && match_[j] >= begin + 2) {
      j = match_[j] - 2;
    }
    if (!tokens_[j].Is(")")) return std::optional<Function>();
    Function f;
    f.params_close = j;
    f.params_open = match_[j];
    if (f.params_open == begin || !tokens_[f.params_open - 1].IsIdentifier() ||
        tokens_[f.params_open - 1].Is("__attribute__")) {
      return Refused(
          "a function definition whose name the rewriter cannot find (near "
          "offset " +
          std::to_string(tokens_[brace].offset) + ")");
    }
    f.name_index = f.params_open - 1;
    f.name = tokens_[f.name_index].text;
    if (IsRewrittenBuiltin(f.name)) {
      return Refused("the program defines a function named like the built-in " + Quote(f.name));
    }
    f.specifiers_begin = begin;
    f.body_open = brace;
    f.body_close = match_[brace];
    f.is_definition = true;
    f.is_kernel = HasKernelQualifier(begin, f.name_index);
    return std::optional<Function>(f);
  }

  // A declaration ending in ';' at program scope: a prototype when it declares a name followed
  // by a parameter list (program-scope variables cannot be initialised by calls).
  Status ReadDeclaration(size_t begin, size_t semicolon) {
    for (size_t k = begin; k < semicolon; ++k) {
      if (tokens_[k].Is("{")) {
        k = match_[k];
        continue;
      }
      if (!tokens_[k].Is("(")) continue;
      if (k > begin && tokens_[k - 1].IsIdentifier() && !tokens_[k - 1].Is("__attribute__") &&
          !tokens_[k - 1].Is("sizeof")) {
        Function f;
        f.name_index = k - 1;
        f.name = tokens_[k - 1].text;
        f.specifiers_begin = begin;
        f.params_open = k;
        f.params_close = match_[k];
        f.is_kernel = HasKernelQualifier(begin, f.name_index);
        functions_.push_back(f);
        return Status::Ok();
      }
      k = match_[k];
    }
    return Status::Ok();
  }

  bool HasKernelQualifier(size_t begin, size_t end) const {
    for (size_t k = begin; k < end; ++k) {
      if (IsKernelQualifier(tokens_[k].text)) return true;
    }
    return false;
  }

  // Which functions must receive the hidden parameter: every kernel (so that the server sets
  // one argument on every kernel), every function whose body uses a rewritten built-in, and
  // every function that calls one of those, directly or through a macro; to a fixed point.
  Status MarkFunctionsNeedingLaunch() {
    std::set<std::string_view> seeds;
    for (const Function& f : functions_) {
      if (f.is_kernel) seeds.insert(f.name);
    }
    const std::set<std::string_view> marked = Closure(seeds, IsRewrittenBuiltin);
    // Marked macros need no edit: they expand inside functions that were marked with them.
    // Functions declared but not defined here stay unmarked (with clBuildProgram a call to
    // them would not link anyway).
    for (const Function& f : functions_) {
      if (f.is_definition && marked.contains(f.name)) needs_launch_.insert(f.name);
    }
    return Status::Ok();
  }

  // Names (functions and macros) that use, directly or through each other, a name in `marked`
  // or one for which `is_seed` holds. Functions and macros are matched by name, so overloads
  // and redefinitions are all marked together: more hidden parameters, never fewer.
  // A worklist over "who mentions whom" keeps this linear in the program's size.
  template <typename Predicate>
  std::set<std::string_view> Closure(std::set<std::string_view> marked, Predicate is_seed) const {
    std::map<std::string_view, std::vector<std::string_view>> mentioned_by;
    std::vector<std::string_view> work(marked.begin(), marked.end());
    auto scan = [&](std::string_view owner, std::span<const Token> tokens) {
      for (const Token& t : tokens) {
        if (!t.IsIdentifier()) continue;
        mentioned_by[t.text].push_back(owner);
        if (is_seed(t.text) && marked.insert(owner).second) work.push_back(owner);
      }
    };
    for (const Macro& m : macros_) scan(m.name, m.body);
    for (const Function& f : functions_) {
      if (!f.is_definition) continue;
      scan(f.name, std::span<const Token>(tokens_).subspan(
                       f.specifiers_begin, f.body_close + 1 - f.specifiers_begin));
    }
    while (!work.empty()) {
      const std::string_view name = work.back();
      work.pop_back();
      auto users = mentioned_by.find(name);
      if (users == mentioned_by.end()) continue;
      for (std::string_view user : users->second) {
        if (marked.insert(user).second) work.push_back(user);
      }
    }
    return marked;
  }

  // Checks that the parameter lists the rewrite edits are what the compiler will see.
  Status CheckSignatures() {
    std::map<std::string_view, const Macro*> macro_by_name;
    for (const Macro& m : macros_) macro_by_name[m.name] = &m;

    for (const Function& f : functions_) {
      if (!needs_launch_.contains(f.name)) continue;
      // Directives are in source order: look at the first one after the signature begins.
      const size_t end = f.is_definition ? f.body_open : f.params_close;
      auto d = std::upper_bound(
          lexed_.directives.begin(), lexed_.directives.end(), f.specifiers_begin,
          [](size_t position, const Directive& dir) { return position < dir.position; });
      if (d != lexed_.directives.end() && d->position <= end) {
        return Refused("a #" + std::string(d->keyword) + " inside the signature of " +
                       Quote(f.name));
      }
      if (!f.is_kernel) continue;
      // A macro in a kernel's parameter list could expand to several parameters (or none),
      // moving the hidden argument's index.
      for (size_t k = f.params_open + 1; k < f.params_close; ++k) {
        auto it = macro_by_name.find(tokens_[k].text);
        if (it == macro_by_name.end()) continue;
        const std::vector<Token>& body = it->second->body;
        bool risky = body.empty();
        int depth = 0;
        for (const Token& t : body) {
          if (t.Is("(") || t.Is("[") || t.Is("{")) ++depth;
          if (t.Is(")") || t.Is("]") || t.Is("}")) --depth;
          if ((t.Is(",") && depth == 0) || t.Is("__VA_ARGS__") || t.Is("void")) risky = true;
        }
        if (risky) {
          return Refused("macro " + Quote(it->first) + " in the parameter list of kernel " +
                         Quote(f.name) + " may change its argument count");
        }
      }
    }
    return Status::Ok();
  }

  // Number of parameters between params_open and params_close.
  size_t CountParams(const Function& f) const {
    const size_t first = f.params_open + 1;
    if (first == f.params_close) return 0;
    if (first + 1 == f.params_close && tokens_[first].Is("void")) return 0;
    size_t count = 1;
    for (size_t k = first; k < f.params_close; ++k) {
      if (tokens_[k].Is("(") || tokens_[k].Is("[") || tokens_[k].Is("{")) {
        k = match_[k];
      } else if (tokens_[k].Is(",")) {
        ++count;
      }
    }
    return count;
  }

  Status EditSignatures() {
    const std::string helper_param = std::string(kHiddenArgType) + " " + std::string(kHiddenArgName);
    const std::string kernel_param = helper_param + ", " + std::string(kControlArgType) + " " +
                                     std::string(kControlArgName);
    for (const Function& f : functions_) {
      if (!needs_launch_.contains(f.name)) continue;
      const std::string& param = f.is_kernel ? kernel_param : helper_param;
      if (f.is_kernel && f.is_definition) {
        const Token& open = tokens_[f.body_open];
        edits_.push_back({open.offset + 1, open.offset + 1, std::string(kKernelPrologue)});
      }
      const Token& close = tokens_[f.params_close];
      if (CountParams(f) > 0) {
        edits_.push_back({close.offset, close.offset, ", " + param});
      } else if (f.params_open + 1 == f.params_close) {
        edits_.push_back({close.offset, close.offset, param});
      } else {  // (void)
        const Token& v = tokens_[f.params_open + 1];
        edits_.push_back({v.offset, v.offset + v.text.size(), param});
      }
    }
    return Status::Ok();
  }

  // Passes the hidden parameter on at every call of a function that takes it, in function
  // bodies and in #define bodies (a macro that calls such a function is itself only expanded
  // inside functions that have the parameter: the closure marked them).
  Status EditCalls() {
    for (const Function& f : functions_) {
      if (f.is_kernel) kernel_names_.insert(f.name);
    }
    std::set<size_t> declared_names;
    for (const Function& f : functions_) declared_names.insert(f.name_index);
    if (Status s = EditCallsIn(tokens_, match_, &declared_names, "the program", false); !s.ok()) return s;

    for (const Directive& d : lexed_.directives) {
      if (d.keyword != "define") continue;
      const std::span<const Token> all(d.tokens);
      Result<std::vector<size_t>> match = MatchBrackets(all);
      if (!match.ok()) {
        // Unbalanced brackets in a macro are fine unless they hide a call we must edit.
        for (const Token& t : all.subspan(1)) {
          if (needs_launch_.contains(t.text)) {
            return Refused("macro " + Quote(d.tokens[0].text) + " calls " + Quote(t.text) +
                           " with unbalanced brackets");
          }
        }
        continue;
      }
      const std::string where = "macro " + Quote(d.tokens[0].text);
      // The macro's own name is token 0: a macro named like a function is not a call.
      std::set<size_t> skip = {0};
      if (Status s = EditCallsIn(all, match.value(), &skip, where, true); !s.ok()) return s;
    }
    for (const Macro& m : macros_) {
      if (!m.from_options) continue;
      for (const Token& t : m.body) {
        if (needs_launch_.contains(t.text)) {
          return Refused("build option macro " + Quote(m.name) + " uses " + Quote(t.text) +
                         ", which takes the hidden parameter; options cannot be rewritten");
        }
      }
    }
    return Status::Ok();
  }

  Status EditCallsIn(std::span<const Token> tokens, const std::vector<size_t>& match,
                     const std::set<size_t>* not_calls, const std::string& where,
                     bool macro_body) {
    for (size_t k = 0; k < tokens.size(); ++k) {
      const Token& t = tokens[k];
      if (!t.IsIdentifier() || !needs_launch_.contains(t.text) || not_calls->contains(k)) continue;
      if (k > 0 && (tokens[k - 1].Is(".") || tokens[k - 1].Is("->"))) continue;
      if (k + 1 == tokens.size() || !tokens[k + 1].Is("(")) {
        // In the program a name not followed by '(' is a variable shadowing the function
        // (OpenCL C has no function pointers), except "(f)(x)", which would call f without
        // the hidden argument. In a macro it may be completed into a call after expansion.
        const bool parenthesised_call = k > 0 && tokens[k - 1].Is("(") &&
                                        k + 2 < tokens.size() && tokens[k + 1].Is(")") &&
                                        tokens[k + 2].Is("(");
        if (macro_body || parenthesised_call) {
          return Refused(where + " names " + Quote(t.text) +
                         " without calling it; the rewriter cannot pass it the launch");
        }
        continue;
      }
      if (kernel_names_.contains(t.text)) {
        return Refused(where + " calls kernel " + Quote(t.text) +
                       " as a function; its hidden arguments are the launch's own");
      }
      const size_t close = match[k + 1];
      const bool no_args = close == k + 2;
      edits_.push_back({tokens[close].offset, tokens[close].offset,
                        std::string(no_args ? "" : ", ") + std::string(kHiddenArgName)});
    }
    return Status::Ok();
  }

  Result<std::vector<KernelInfo>> DescribeKernels() const {
    std::set<std::string_view> none;
    const std::set<std::string_view> observing = Closure(none, ObservesWorkGroups);
    std::vector<KernelInfo> kernels;
    std::map<std::string_view, cl_uint> args_by_name;
    for (const Function& f : functions_) {
      if (!f.is_kernel || !f.is_definition) continue;
      const cl_uint args = static_cast<cl_uint>(CountParams(f));
      auto [seen, first] = args_by_name.emplace(f.name, args);
      if (!first) {
        // Two definitions are only possible in different #if branches.
        if (seen->second != args) {
          return Refused("kernel " + Quote(f.name) +
                         " is defined twice with different argument counts");
        }
        continue;
      }
      kernels.push_back({std::string(f.name), args, observing.contains(f.name)});
    }
    return kernels;
  }

  std::string ApplyEdits() {
    std::stable_sort(edits_.begin(), edits_.end(),
              [](const Edit& a, const Edit& b) { return a.begin < b.begin; });
    std::string out(kPrelude);
    out.reserve(kPrelude.size() + source_.size() + edits_.size() * 24);
    size_t at = 0;
    for (const Edit& e : edits_) {
      out.append(source_.substr(at, e.begin - at));
      out.append(e.text);
      at = e.end;
    }
    out.append(source_.substr(at));
    return out;
  }

  std::string_view source_;
  std::string_view options_;
  Lexed lexed_;
  std::vector<Token> tokens_;
  std::vector<size_t> match_;
  std::vector<Macro> macros_;
  std::vector<Function> functions_;
  std::set<std::string_view> needs_launch_;
  std::set<std::string_view> kernel_names_;
  std::vector<Edit> edits_;
};

// ---------------------------------------------------------------------------------------------
// Planning.

Status ValidateShape(const KernelInfo& kernel, const LaunchShape& launch) {
  if (launch.dims < 1 || launch.dims > 3) return Refused("work_dim must be 1, 2 or 3");
  for (cl_uint d = 0; d < launch.dims; ++d) {
    if (launch.global[d] == 0) return Refused("a global size of 0 leaves nothing to slice");
    if (launch.offset[d] > std::numeric_limits<size_t>::max() - launch.global[d]) {
      return Refused("global offset + global size overflows size_t");
    }
    if (!launch.local_given) continue;
    if (launch.local[d] == 0) return Refused("a local size of 0");
    if (launch.global[d] % launch.local[d] != 0) {
      return Refused(
          "non-uniform work-groups (local size does not divide the global "
          "size in dimension " +
          std::to_string(d) + ")");
    }
  }
  if (!launch.local_given && kernel.observes_work_groups) {
    return Refused("kernel " + Quote(kernel.name) +
                   " observes work-groups and the local size is left to the driver, "
                   "whose choice is not visible; pass an explicit local size");
  }
  return Status::Ok();
}

// Slicing units along a dimension: work-groups, or granules when the local size is implicit.
size_t UnitSize(const LaunchShape& launch, cl_uint d) {
  if (launch.local_given) return launch.local[d];
  return d == 0 ? kImplicitGranule : 1;
}
size_t UnitCount(const LaunchShape& launch, cl_uint d) {
  if (d >= launch.dims) return 1;
  const size_t unit = UnitSize(launch, d);
  return launch.global[d] / unit + (launch.global[d] % unit != 0 ? 1 : 0);
}

// Builds slices along `dim` from consecutive unit counts.
SlicePlan MakePlan(const LaunchShape& launch, cl_uint dim, const std::vector<size_t>& counts) {
  SlicePlan plan;
  plan.launch = launch;
  plan.sliced_dim = dim;
  const size_t unit = UnitSize(launch, dim);
  size_t first = 0;
  for (size_t count : counts) {
    Slice s;
    for (cl_uint d = 0; d < launch.dims; ++d) {
      s.offset[d] = launch.offset[d];
      s.global[d] = launch.global[d];
    }
    s.offset[dim] = launch.offset[dim] + first * unit;
    s.global[dim] = std::min(count * unit, launch.global[dim] - first * unit);
    if (launch.local_given) s.group_base[dim] = first;
    s.hidden_arg = HiddenArgForSlice(launch, s);
    plan.slices.push_back(s);
    first += count;
  }
  return plan;
}

}  // namespace

const KernelInfo* RewrittenProgram::FindKernel(std::string_view name) const {
  for (const KernelInfo& k : kernels) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

Result<RewrittenProgram> RewriteForSlicing(std::string_view source,
                                           std::string_view build_options) {
  return Rewriter(source, build_options).Run();
}

Status CheckBuiltKernels(const RewrittenProgram& program, std::span<const BuiltKernel> built) {
  for (const BuiltKernel& b : built) {
    const KernelInfo* k = program.FindKernel(b.name);
    if (k == nullptr) {
      return Refused("the compiler found kernel " + Quote(b.name) +
                     ", which the rewriter did not see");
    }
    if (b.num_args != k->user_arg_count + kHiddenArgCount) {
      return Refused("kernel " + Quote(b.name) + " has " + std::to_string(b.num_args) +
                     " arguments after the rewrite; expected " +
                     std::to_string(k->user_arg_count + kHiddenArgCount));
    }
  }
  return Status::Ok();
}

Result<SlicePlan> PlanSlices(const KernelInfo& kernel, const LaunchShape& launch,
                             size_t num_slices) {
  if (Status s = ValidateShape(kernel, launch); !s.ok()) return s;
  if (num_slices == 0) return Refused("zero slices asked for");
  // Outermost dimension that can be cut into num_slices, else the one with the most units.
  cl_uint dim = launch.dims - 1;
  std::optional<cl_uint> fits;
  for (cl_uint d = launch.dims; d-- > 0;) {
    if (UnitCount(launch, d) >= num_slices) {
      fits = d;
      break;
    }
    if (UnitCount(launch, d) > UnitCount(launch, dim)) dim = d;
  }
  if (fits) dim = *fits;
  const size_t units = UnitCount(launch, dim);
  const size_t slices = std::min(num_slices, units);
  std::vector<size_t> counts(slices, units / slices);
  counts.back() += units % slices;  // the remainder runs last
  return MakePlan(launch, dim, counts);
}

Result<SlicePlan> PlanSlicesOfSize(const KernelInfo& kernel, const LaunchShape& launch,
                                   size_t max_groups_per_slice) {
  if (Status s = ValidateShape(kernel, launch); !s.ok()) return s;
  if (max_groups_per_slice == 0) return Refused("zero work-groups per slice asked for");
  size_t total = 1;
  for (cl_uint d = 0; d < launch.dims; ++d) total *= UnitCount(launch, d);
  // Outermost dimension whose cross-section (units in one step along it) fits in a slice, else
  // the one with the smallest cross-section.
  cl_uint dim = 0;
  bool found = false;
  for (cl_uint d = launch.dims; d-- > 0;) {
    if (UnitCount(launch, d) > 1 && total / UnitCount(launch, d) <= max_groups_per_slice) {
      dim = d;
      found = true;
      break;
    }
  }
  if (!found) {
    for (cl_uint d = 0; d < launch.dims; ++d) {
      if (UnitCount(launch, d) > UnitCount(launch, dim)) dim = d;
    }
  }
  const size_t units = UnitCount(launch, dim);
  const size_t per_slice = std::max<size_t>(1, max_groups_per_slice / (total / units));
  std::vector<size_t> counts;
  for (size_t done = 0; done < units; done += per_slice) {
    counts.push_back(std::min(per_slice, units - done));
  }
  return MakePlan(launch, dim, counts);
}

cl_ulong16 HiddenArgForSlice(const LaunchShape& launch, const Slice& slice) {
  cl_ulong16 v{};
  v.s[kSlotSliced] = kModeSlice;
  for (cl_uint d = 0; d < 3; ++d) {
    const bool used = d < launch.dims;
    v.s[kSlotOffset + d] = used ? launch.offset[d] : 0;
    v.s[kSlotGlobal + d] = used ? launch.global[d] : 1;
    // With an implicit local size the group count is unknown; kernels that could read it are
    // never sliced (PlanSlices), so 0 marks it as unknown.
    v.s[kSlotNumGroups + d] = !used ? 1 : launch.local_given ? launch.global[d] / launch.local[d] : 0;
    v.s[kSlotGroupBase + d] = used ? slice.group_base[d] : 0;
  }
  return v;
}

cl_ulong16 HiddenArgForWholeLaunch() { return cl_ulong16{}; }

Result<RunPlan> PlanRun(const KernelInfo& kernel, const LaunchShape& launch, size_t max_local) {
  LaunchShape shape = launch;
  if (!shape.local_given) {
    // The kernel does not observe work-groups (else ValidateShape refuses), so rgpu may pick
    // the local size: the widest divisor of the global size along dimension 0, others 1.
    if (kernel.observes_work_groups) return ValidateShape(kernel, launch);
    size_t pick = 1;
    for (size_t l = std::min<size_t>(std::max<size_t>(max_local, 1), 256); l > 1; --l) {
      if (shape.global[0] % l == 0) {
        pick = l;
        break;
      }
    }
    if (pick < kMinRunLocal && shape.global[0] > kMinRunLocal) {
      return Refused("no work-group size of at least " + std::to_string(kMinRunLocal) +
                     " divides global size " + std::to_string(shape.global[0]));
    }
    shape.local_given = true;
    shape.local[0] = pick;
    shape.local[1] = shape.local[2] = 1;
  }
  if (Status s = ValidateShape(kernel, shape); !s.ok()) return s;
  RunPlan plan;
  plan.launch = shape;
  plan.total_groups = 1;
  for (cl_uint d = 0; d < shape.dims; ++d) plan.total_groups *= shape.global[d] / shape.local[d];
  if (plan.total_groups >= 0xffffffffull) return Refused("more work-groups than a run counts");
  return plan;
}

RunPlan::Physical RunPlan::Range(uint64_t groups) const {
  Physical p;
  for (cl_uint d = 0; d < 3; ++d) {
    p.global[d] = d < launch.dims ? launch.local[d] : 1;
    p.local[d] = p.global[d];
  }
  p.global[0] = static_cast<size_t>(groups) * launch.local[0];
  return p;
}

cl_ulong16 RunPlan::HiddenArg() const {
  Slice whole;
  cl_ulong16 v = HiddenArgForSlice(launch, whole);
  v.s[kSlotSliced] = kModeRun;
  for (cl_uint d = 0; d < 3; ++d) v.s[kSlotGroupBase + d] = 0;
  return v;
}

}  // namespace rgpu::slicer
