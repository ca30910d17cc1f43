#include "lib/hlo/text_parser.h"

#include <sys/mman.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "lib/base/diagnostic.h"
#include "lib/base/metrics.h"
#include "lib/base/parallel.h"
#include "lib/base/text_arena.h"
#include "lib/hlo/view_map.h"

namespace hlomem::hlo {
namespace {

bool IsNameStart(char c) {
  return absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_';
}
// [A-Za-z0-9_.-], by table: names are most of what the parser reads.
struct NameCharTable {
  bool of[256];
};
constexpr NameCharTable MakeNameCharTable() {
  NameCharTable table{};
  for (int c = 0; c < 256; ++c) {
    table.of[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-';
  }
  return table;
}
constexpr NameCharTable kNameChar = MakeNameCharTable();
bool IsNameChar(char c) { return kNameChar.of[static_cast<unsigned char>(c)]; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Byte classes for the scanning loops, which step over runs of bytes that
// mean nothing to them with one table lookup per byte.
enum ByteClass : uint8_t {
  kPlain = 0,
  kStructural = 1,  // " ( ) { } [ ]: strings and nesting
  kSeparator = 2,   // , space tab newline: end an attribute value at depth 0
};
struct ByteClassTable {
  uint8_t of[256];
};
constexpr ByteClassTable MakeByteClassTable() {
  ByteClassTable table{};
  for (const char c : {'"', '(', ')', '{', '}', '[', ']'}) {
    table.of[static_cast<unsigned char>(c)] = kStructural;
  }
  for (const char c : {',', ' ', '\t', '\n', '\r'}) {
    table.of[static_cast<unsigned char>(c)] = kSeparator;
  }
  return table;
}
constexpr ByteClassTable kByteClass = MakeByteClassTable();
inline uint8_t ClassOf(char c) { return kByteClass.of[static_cast<unsigned char>(c)]; }

// Masks of 16 bytes at once for the scanning loops: bit k for p[k]. With
// SSE2 (every x86-64) a few vector compares, else a loop.
template <typename Predicate>
inline uint32_t MaskOf16(const char* p, Predicate holds) {
  uint32_t mask = 0;
  for (int k = 0; k < 16; ++k) mask |= static_cast<uint32_t>(holds(p[k])) << k;
  return mask;
}
#ifdef __SSE2__
// Bit k set when IsNameChar(p[k]).
inline uint32_t NameCharMask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  // Signed compares: bytes from 0x80 up, negative, fall outside every range.
  const auto in_range = [](__m128i x, char lo, char hi) {
    return _mm_and_si128(_mm_cmpgt_epi8(x, _mm_set1_epi8(static_cast<char>(lo - 1))),
                         _mm_cmplt_epi8(x, _mm_set1_epi8(static_cast<char>(hi + 1))));
  };
  // Setting bit 5 folds A-Z onto a-z, and nothing else onto a-z.
  const __m128i letter = in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z');
  // '-', '.' and the digits: the range '-'...'9' but '/'.
  const __m128i dash_dot_digit =
      _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')), in_range(v, '-', '9'));
  const __m128i underscore = _mm_cmpeq_epi8(v, _mm_set1_epi8('_'));
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_or_si128(letter, _mm_or_si128(dash_dot_digit, underscore))));
}
// Bit k set when p[k] is a quote or a bracket (kStructural).
inline uint32_t StructuralMask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const auto is = [&v](char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
  const __m128i brackets = _mm_or_si128(_mm_or_si128(is('('), is(')')),
                                        _mm_or_si128(_mm_or_si128(is('{'), is('}')),
                                                     _mm_or_si128(is('['), is(']'))));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_or_si128(brackets, is('"'))));
}
// Bit k set when p[k] == c.
inline uint32_t ByteMask16(const char* p, char c) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(c))));
}
#else
inline uint32_t NameCharMask16(const char* p) { return MaskOf16(p, IsNameChar); }
inline uint32_t StructuralMask16(const char* p) {
  return MaskOf16(p, [](char c) { return ClassOf(c) == kStructural; });
}
inline uint32_t ByteMask16(const char* p, char c) {
  return MaskOf16(p, [c](char b) { return b == c; });
}
#endif

// A reference by name that is resolved once its scope has been parsed.
struct PendingName {
  absl::string_view name;
  const char* where;
  uint32_t slot;  // index into the pool being filled
  uint32_t hash;  // HashView(name)
};
// An instruction name not yet in the computation's name map (see
// TextParser::kDeferNamesAfter).
struct DeferredName {
  absl::string_view name;
  uint32_t hash;
  InstrId id;
  // Where the duplicate error points: the name, '%' included.
  const char* where() const { return name.data()[-1] == '%' ? name.data() - 1 : name.data(); }
};
struct CompactOperand {
  uint32_t slot;           // index into Module::operand_pool
  absl::string_view base;  // "x" of "x#1"
  ShapeIndex index;        // {1}
  absl::string_view text;  // "x#1"
  const char* where;
};
// An operand written with a shape whose name is resolved later (a forward
// reference, a deferred name, a compact operand): checked at the end of the
// body against the shape of the instruction its slot then holds.
struct DeclaredOperand {
  uint32_t slot;      // index into Module::operand_pool
  ShapeId shape;      // as written before the name
  const char* where;  // the written shape
};
// No shape written (short-form operands, computations without a signature).
constexpr ShapeId kNoShape = 0xffffffffu;
struct PendingCallee {
  uint32_t slot;  // index into Module::callee_pool
  absl::string_view name;
  const char* where;
};
// A cut between two parts of a module's text (see TextParser::ParseInParts):
// at a computation's start, or at an instruction's line inside a body.
struct Cut {
  const char* at;
  bool in_body;
};
// The instructions of a computation that one part parsed, when a cut falls
// inside the computation's body: what the part could not settle alone is
// settled once every segment of the body is appended (CloseBody). Ids and
// slots are the part's module's until appended, then the whole module's.
struct BodySegment {
  CompId computation = kNoId;  // set in the segment that opens the body
  InstrId first = 0, end = 0;  // the segment's instructions
  InstrId root = kNoId;        // its ROOT, if it has one
  bool closed = false;         // the body's '}' is in this segment
  // A continuing segment's parameters: number and shape as written.
  std::vector<std::pair<int32_t, absl::string_view>> parameters;
  ViewMap names;               // the segment's instruction names -> ids
  InstrId id_base = 0;         // added to the ids in `names`
  std::vector<PendingName> operands;      // names not in `names`
  std::vector<PendingName> predecessors;  // names not in `names`
  std::vector<DeclaredOperand> declared;  // shapes written for `operands`
  absl::string_view execution_thread;     // once closed
  // The opening segment's: the computation's signature.
  std::vector<absl::string_view> signature_parameters;
  ShapeId signature_result = kNoShape;
};

// Recursive-descent parser over the raw bytes. Every Parse* function returns
// false after recording the first error; the public entry point turns that
// into a Status.
class TextParser {
 public:
  TextParser(std::shared_ptr<const FileContents> file, const ParseOptions& options)
      : file_(std::move(file)),
        options_(options),
        begin_(file_->data().data()),
        p_(begin_),
        end_(begin_ + file_->data().size()) {}

  absl::StatusOr<std::vector<Module>> Run() {
    std::vector<Module> modules;
    SkipSpace();
    if (p_ == end_) {
      return ErrorAt(file_->path(), file_->data(), 0,
                     "expected an HLO module, found an empty file");
    }
    while (true) {
      SkipSpace();
      if (p_ == end_) break;
      Module module;
      if (!ParseModule(&module)) return error_;
      modules.push_back(std::move(module));
    }
    return modules;
  }

 private:
  // ---- errors ----------------------------------------------------------------
  bool Error(const char* at, absl::string_view message) {
    if (error_.ok()) {
      error_ = ErrorAt(file_->path(), file_->data(),
                       static_cast<size_t>(at - begin_), message);
    }
    return false;
  }
  bool NestingTooDeep() {
    return Error(p_, absl::StrCat("nesting deeper than ", options_.max_nesting_depth,
                                  " levels (--max-nesting-depth raises the limit)"));
  }
  // Describes what the cursor is looking at, for "expected X, found Y".
  std::string Found() {
    if (p_ == end_) return "end of file";
    const char* q = p_;
    if (IsNameStart(*q) || *q == '%') {
      ++q;
      while (q < end_ && IsNameChar(*q) && q - p_ < 40) ++q;
      return absl::StrCat("'", absl::string_view(p_, static_cast<size_t>(q - p_)), "'");
    }
    if (*q == '\n') return "end of line";
    return absl::StrCat("'", absl::string_view(q, 1), "'");
  }
  bool Expected(absl::string_view what) {
    return Error(p_, absl::StrCat("expected ", what, ", found ", Found()));
  }

  // ---- lexical helpers -------------------------------------------------------
  // Skips whitespace, "// ..." line comments and "/* ... */" block comments.
  // Inline for the usual case, a cursor already on a token: the helpers
  // below call it before every token.
  ABSL_ATTRIBUTE_ALWAYS_INLINE void SkipSpace() {
    if (ABSL_PREDICT_TRUE(p_ < end_ && StartsToken(*p_))) return;
    // One space between tokens, as printers write them.
    if (end_ - p_ >= 2 && p_[0] == ' ' && StartsToken(p_[1])) {
      ++p_;
      return;
    }
    SkipSpaceSlow();
  }
  // Neither whitespace nor the '/' of a comment.
  static bool StartsToken(char c) { return static_cast<unsigned char>(c) > ' ' && c != '/'; }
  ABSL_ATTRIBUTE_NOINLINE void SkipSpaceSlow() {
    while (true) {
      const char* blank = p_;  // a local: the loop then stays in registers
      while (blank < end_ && IsBlank(*blank)) ++blank;
      p_ = blank;
      if (end_ - p_ < 2 || p_[0] != '/') return;
      if (p_[1] == '/') {
        const void* nl = std::memchr(p_, '\n', static_cast<size_t>(end_ - p_));
        p_ = nl ? static_cast<const char*>(nl) + 1 : end_;
      } else if (p_[1] == '*') {
        const char* q = p_ + 2;
        while (q + 1 < end_ && !(q[0] == '*' && q[1] == '/')) ++q;
        p_ = q + 1 < end_ ? q + 2 : end_;
      } else {
        return;
      }
      ++comments_skipped_;
    }
  }
  // ' ', '\n', '\t' or '\r', with one test.
  static bool IsBlank(char c) {
    constexpr uint64_t kBlanks = uint64_t{1} << ' ' | uint64_t{1} << '\n' |
                                 uint64_t{1} << '\t' | uint64_t{1} << '\r';
    const auto u = static_cast<unsigned char>(c);
    return u <= ' ' && (kBlanks >> u & 1) != 0;
  }
  // Inline (with SkipSpace's usual case): each instruction calls these
  // a dozen times.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Peek(char c) {
    SkipSpace();
    return p_ < end_ && *p_ == c;
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Consume(char c) {
    if (!Peek(c)) return false;
    ++p_;
    return true;
  }
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Expect(char c) {
    if (Consume(c)) return true;
    return ExpectedChar(c);
  }
  ABSL_ATTRIBUTE_NOINLINE bool ExpectedChar(char c) {
    return Expected(absl::StrCat("'", absl::string_view(&c, 1), "'"));
  }
  // True if the next token is the identifier `word` (not a prefix of a name).
  bool PeekKeyword(absl::string_view word) {
    SkipSpace();
    const size_t n = word.size();
    return static_cast<size_t>(end_ - p_) >= n && *p_ == word.front() &&
           absl::string_view(p_, n) == word &&
           (p_ + n == end_ || !IsNameChar(p_[n]));
  }
  bool ConsumeKeyword(absl::string_view word) {
    if (!PeekKeyword(word)) return false;
    p_ += word.size();
    return true;
  }

  // name ::= '%'? [A-Za-z_][A-Za-z0-9_.-]*
  // Inline: a call per name costs more than the scan of most names.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool LexName(absl::string_view* out,
                                            absl::string_view what = "a name") {
    SkipSpace();
    const char* q = p_;
    if (q < end_ && *q == '%') ++q;
    if (q == end_ || !IsNameStart(*q)) return Expected(what);
    const char* start = q;
    q = SkipNameChars(q + 1);
    *out = absl::string_view(start, static_cast<size_t>(q - start));
    p_ = q;
    return true;
  }
  // The first byte at or after `q` whose bit `stop_mask16` sets, or end_:
  // sixteen bytes a round, with one bounds check per round.
  template <typename StopMask16>
  const char* ScanTo(const char* q, StopMask16 stop_mask16) const {
    while (end_ - q >= 16) {
      const uint32_t stops = stop_mask16(q) & 0xffff;
      if (stops != 0) return q + __builtin_ctz(stops);
      q += 16;
    }
    // The file's last few bytes, through a zero-padded copy; bits past its
    // end are masked off.
    char tail[16] = {};
    const auto left = static_cast<size_t>(end_ - q);
    std::memcpy(tail, q, left);
    const uint32_t stops = stop_mask16(tail) & ((uint32_t{1} << left) - 1);
    return stops != 0 ? q + __builtin_ctz(stops) : end_;
  }
  // The end of the run of name characters starting at `q`: names are most
  // of the text.
  const char* SkipNameChars(const char* q) const {
    return ScanTo(q, [](const char* p) { return ~NameCharMask16(p); });
  }
  // The first `c` at or after `q`, or end_.
  const char* FindByte(const char* q, char c) const {
    return ScanTo(q, [c](const char* p) { return ByteMask16(p, c); });
  }

  // int ::= '-'? [0-9]+  (overflow-checked)
  bool LexInt(int64_t* out, absl::string_view what = "an integer") {
    SkipSpace();
    const char* q = p_;
    bool negative = false;
    if (q < end_ && *q == '-') {
      negative = true;
      ++q;
    }
    if (q == end_ || !IsDigit(*q)) return Expected(what);
    uint64_t value = 0;
    const char* digits = q;
    while (q < end_ && IsDigit(*q)) {
      const uint64_t digit = static_cast<uint64_t>(*q - '0');
      if (value > (uint64_t{1} << 63) / 10 ||
          value * 10 + digit > (uint64_t{1} << 63) - (negative ? 0 : 1)) {
        return Error(digits, "integer is too large");
      }
      value = value * 10 + digit;
      ++q;
    }
    *out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
    p_ = q;
    return true;
  }

  // An integer that the model keeps in 32 bits (parameter numbers, tuple
  // indices): real modules stay far below 2^31.
  bool LexInt32(int32_t* out, absl::string_view what) {
    SkipSpace();
    const char* digits = p_;
    int64_t value = 0;
    if (!LexInt(&value, what)) return false;
    if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
      return Error(digits, "integer is too large");
    }
    *out = static_cast<int32_t>(value);
    return true;
  }

  // string ::= '"' ([^"\\] | '\\' .)* '"'   -- returns the contents, escapes kept.
  bool LexString(absl::string_view* out) {
    SkipSpace();
    if (p_ == end_ || *p_ != '"') return Expected("a string");
    const char* start = p_;
    const char* q = p_ + 1;
    // Jump from quote to quote (metadata strings are long); a quote after an
    // odd run of backslashes is escaped.
    while (true) {
      q = static_cast<const char*>(std::memchr(q, '"', static_cast<size_t>(end_ - q)));
      if (q == nullptr) return Error(start, "unterminated string");
      const char* backslashes = q;
      while (backslashes > start + 1 && backslashes[-1] == '\\') --backslashes;
      if ((q - backslashes) % 2 == 0) break;
      ++q;
    }
    *out = absl::string_view(start + 1, static_cast<size_t>(q - start - 1));
    p_ = q + 1;
    return true;
  }

  // Skips a balanced run starting at an opening bracket, honouring strings.
  // Used for literals and verbatim attribute values.
  bool SkipBalanced() {
    const char* start = p_;
    int depth = 0;
    while (p_ < end_) {
      p_ = SkipUnstructured(p_);
      if (p_ == end_) break;
      const char c = *p_;
      if (c == '"') {
        absl::string_view ignored;
        if (!LexString(&ignored)) return false;
        continue;
      }
      if (c == '(' || c == '{' || c == '[') {
        if (++depth > options_.max_nesting_depth) {
          return NestingTooDeep();
        }
      } else if (c == ')' || c == '}' || c == ']') {
        if (--depth == 0) {
          ++p_;
          return true;
        }
      }
      ++p_;
    }
    return Error(start, absl::StrCat("unbalanced '", absl::string_view(start, 1), "'"));
  }

  // The first byte at or after `q` that is a quote or a bracket, or end_.
  const char* SkipUnstructured(const char* q) const { return ScanTo(q, StructuralMask16); }

  // attribute value ::= a balanced blob ({...}, (...), [...], "...") or a bare
  // token, ending at ',' or whitespace at depth 0 or an unmatched closer.
  bool LexAttributeValue(absl::string_view* out) {
    SkipSpace();
    const char* start = p_;
    int depth = 0;
    while (p_ < end_) {
      const char c = *p_;
      if (ClassOf(c) == kPlain) {
        const char* q = p_ + 1;
        while (q < end_ && ClassOf(*q) == kPlain) ++q;
        p_ = q;
        continue;
      }
      if (c == '"') {
        absl::string_view ignored;
        if (!LexString(&ignored)) return false;
        continue;
      }
      if (c == '(' || c == '{' || c == '[') {
        if (++depth > options_.max_nesting_depth) {
          return NestingTooDeep();
        }
      } else if (c == ')' || c == '}' || c == ']') {
        if (depth == 0) break;
        --depth;
      } else if (depth == 0 && (c == ' ' || c == '\t')) {
        // 2026 printers write values such as "mesh['x'=8] {'x'}": a value
        // continues when a bracket follows on the same line.
        const char* q = p_;
        while (q < end_ && (*q == ' ' || *q == '\t')) ++q;
        if (q < end_ && (*q == '{' || *q == '[')) {
          p_ = q;
          continue;
        }
        break;
      } else if (depth == 0 && (c == ',' || c == '\n' || c == '\r')) {
        break;
      }
      ++p_;
    }
    if (depth != 0) return Error(start, "unbalanced brackets in attribute value");
    if (p_ == start) return Expected("an attribute value");
    *out = absl::string_view(start, static_cast<size_t>(p_ - start));
    return true;
  }

  // A custom-call's literal= value, as XLA prints it: the shape, a space,
  // then the value ("f32[] 0.1", "s32[2]{0} {1, 2}", "(f32[], s32[]) (1, 2)").
  // The general rule would end a scalar's value at the space.
  bool LexLiteralAttributeValue(absl::string_view* out) {
    SkipSpace();
    const char* start = p_;
    if (!LooksLikeShape()) return LexAttributeValue(out);
    if (!ScanShapeExtent()) return false;
    const char* q = p_;
    while (q < end_ && (*q == ' ' || *q == '\t')) ++q;
    if (q < end_ && (*q == '{' || *q == '(')) {
      p_ = q;
      if (!SkipBalanced()) return false;
    } else {
      // A scalar: a number, true/false, nan, -inf, ... up to a separator.
      const char* token = q;
      while (q < end_ && ClassOf(*q) == kPlain) ++q;
      if (q == token) return Error(token, "expected the literal's value after its shape");
      p_ = q;
    }
    *out = absl::string_view(start, static_cast<size_t>(p_ - start));
    return true;
  }

  // ---- shapes ----------------------------------------------------------------
  // Finds the end of the shape starting at p_ without interpreting it, so
  // the text can be looked up in the cache of shapes already parsed.
  bool ScanShapeExtent() {
    SkipSpace();
    if (p_ < end_ && *p_ == '(') return SkipBalanced();
    const char* q = p_;
    while (q < end_ && absl::ascii_isalnum(static_cast<unsigned char>(*q))) ++q;
    if (q == p_ || q == end_ || *q != '[') return Expected("a shape");
    // Dimensions are a few bytes: FindByte beats a call to memchr.
    const char* close = FindByte(q, ']');
    if (close == end_) return Error(q, "unbalanced '['");
    p_ = close + 1;
    if (p_ < end_ && *p_ == '{') return SkipLayout();
    return true;
  }

  // SkipBalanced for the layout at the cursor, which is usually flat
  // ("{2,1,0}"): then its first structural byte is the closing brace.
  bool SkipLayout() {
    const char* q = SkipUnstructured(p_ + 1);
    if (q == end_ || *q != '}' || options_.max_nesting_depth < 1) return SkipBalanced();
    p_ = q + 1;
    return true;
  }

  bool ParseShape(ShapeId* out, int depth = 0) {
    SkipSpace();
    if (AtPreviousShape()) {
      p_ += previous_shape_text_.size();
      *out = previous_shape_;
      return true;
    }
    const char* start = p_;
    if (!ScanShapeExtent()) return false;
    const absl::string_view text(start, static_cast<size_t>(p_ - start));
    const uint32_t hash = HashView(text);
    if (const uint32_t* cached = shape_cache_.Find(text, hash)) {
      *out = *cached;
    } else {
      p_ = start;
      Shape shape;
      if (!ParseShapeUncached(&shape, depth)) return false;
      absl::StatusOr<ShapeId> id = module_->shapes.Intern(std::move(shape));
      if (!id.ok()) return Error(start, absl::StrCat("invalid shape: ", id.status().message()));
      shape_cache_.TryEmplace(key_copies_.Copy(text), hash, *id);
      *out = *id;
    }
    previous_shape_text_ = text;
    previous_shape_ = *out;
    return true;
  }

  // True if the text at the cursor is the shape parsed last (as it is for
  // most instructions): ScanShapeExtent would find the same extent in the
  // same bytes, and shape_cache_ the same id, so both are skipped.
  bool AtPreviousShape() const {
    const absl::string_view text = previous_shape_text_;
    const size_t n = text.size();
    if (n == 0 || static_cast<size_t>(end_ - p_) < n || !SameBytes(p_, text.data(), n)) {
      return false;
    }
    // The scan looks one byte past a shape ending in ']' for a layout.
    return text.back() != ']' || p_ + n == end_ || p_[n] != '{';
  }

  // shape ::= '(' (shape (',' shape)*)? ')' | type '[' dims ']' layout?
  bool ParseShapeUncached(Shape* shape, int depth) {
    if (depth > options_.max_nesting_depth) {
      return NestingTooDeep();
    }
    if (Consume('(')) {
      shape->type = PrimitiveType::kTuple;
      if (Consume(')')) return true;
      do {
        ShapeId element;
        if (!ParseShape(&element, depth + 1)) return false;
        shape->tuple_elements.push_back(element);
      } while (Consume(','));
      return Expect(')');
    }
    SkipSpace();
    const char* type_start = p_;
    while (p_ < end_ && absl::ascii_isalnum(static_cast<unsigned char>(*p_))) ++p_;
    const absl::string_view type_name(type_start, static_cast<size_t>(p_ - type_start));
    std::optional<PrimitiveType> type = PrimitiveTypeFromName(type_name);
    if (!type) {
      return Error(type_start, absl::StrCat("unknown element type '", type_name, "'"));
    }
    shape->type = *type;
    if (!Expect('[')) return false;
    if (!Consume(']')) {
      do {
        SkipSpace();
        bool dynamic = false;
        int64_t dim = 0;
        if (p_ < end_ && *p_ == '?') {
          ++p_;
          dynamic = true;
          dim = kUnboundedDimension;
        } else {
          if (p_ + 1 < end_ && p_[0] == '<' && p_[1] == '=') {
            p_ += 2;
            dynamic = true;
          }
          const char* dim_start = p_;
          if (!LexInt(&dim, "a dimension size")) return false;
          if (dim < 0) {
            return Error(dim_start, absl::StrCat("negative dimension size ", dim));
          }
        }
        shape->dims.push_back(dim);
        if (dynamic) {
          shape->dynamic_dims.resize(shape->dims.size(), false);
          shape->dynamic_dims.back() = true;
        }
      } while (Consume(','));
      if (!Expect(']')) return false;
    }
    if (!shape->dynamic_dims.empty()) shape->dynamic_dims.resize(shape->dims.size(), false);
    // A layout follows the ']' directly; a '{' after a space is the body of
    // a computation whose program shape ends with this shape.
    if (p_ < end_ && *p_ == '{') {
      ++p_;
      Layout layout;
      if (!ParseLayoutBody(&layout)) return false;
      shape->layout = std::move(layout);
    }
    return true;
  }

  // layout ::= '{' (int (',' int)*)? (':' extra*)? '}'
  bool ParseLayoutBody(Layout* layout) {
    if (!Peek(':') && !Peek('}')) {
      do {
        int64_t d;
        if (!LexInt(&d, "a layout dimension")) return false;
        layout->minor_to_major.push_back(d);
      } while (Consume(','));
    }
    if (Consume(':')) {
      while (!Peek('}')) {
        if (p_ == end_) return Expected("'}'");
        const char* at = p_;
        const char c = *p_;
        if (c == 'T' && p_ + 1 < end_ && p_[1] == '(') {
          ++p_;
          while (p_ < end_ && *p_ == '(') {
            ++p_;
            std::vector<int64_t> tile;
            if (!Peek(')')) {
              do {
                if (Consume('*')) {
                  tile.push_back(-1);
                } else {
                  int64_t t;
                  if (!LexInt(&t, "a tile dimension")) return false;
                  tile.push_back(t);
                }
              } while (Consume(','));
            }
            if (!Expect(')')) return false;
            layout->tiles.push_back(std::move(tile));
          }
        } else if ((c == 'L' || c == 'E' || c == 'S' || c == 'M') &&
                   p_ + 1 < end_ && p_[1] == '(') {
          p_ += 2;
          int64_t value;
          if (!LexInt(&value) || !Expect(')')) return false;
          if (c == 'L') layout->tail_padding_alignment = value;
          if (c == 'E') layout->element_size_bits = value;
          if (c == 'S') layout->memory_space = value;
          if (c == 'M') layout->dynamic_metadata_prefix = value;
        } else if (c == 'D' || c == '#' || c == '*' || c == 'P' || c == 'S') {
          // D(...) #(...) *(...) P(...) SC(...): kept verbatim.
          while (p_ < end_ && *p_ != '(' && *p_ != '}') ++p_;
          if (p_ == end_ || *p_ != '(') return Error(at, "malformed layout");
          if (!SkipBalanced()) return false;
          layout->other.append(at, static_cast<size_t>(p_ - at));
        } else {
          return Error(at, "unexpected character in layout");
        }
      }
    }
    return Expect('}');
  }

  // shape_index ::= '{' (int (',' int)*)? '}'
  bool ParseShapeIndex(ShapeIndex* index) {
    if (!Expect('{')) return false;
    if (Consume('}')) return true;
    do {
      int64_t i;
      if (!LexInt(&i, "a shape index")) return false;
      index->push_back(i);
    } while (Consume(','));
    return Expect('}');
  }

  // ---- module ----------------------------------------------------------------
  // module ::= ('HloModule' name ':'? (',' attribute)*)? stack_frames? computation*
  bool ParseModule(Module* module) {
    module_ = module;
    module->source = file_;
    module->path = file_->path();
    module->from_text = true;
    module->metadata.emplace_back();  // index 0: no metadata
    shape_cache_.Clear();
    previous_shape_text_ = {};
    std::fill(std::begin(agreeing_pairs_), std::end(agreeing_pairs_), 0);
    computation_ids_.Clear();
    metadata_ids_.Clear();
    pending_callees_.clear();

    SkipSpace();
    const char* module_start = p_;
    if (ConsumeKeyword("HloModule")) {
      if (!LexName(&module->name, "a module name")) return false;
      // "HloModule m:", as 2017-era printers wrote it and XLA's own tests
      // still do: XLA's lexer reads a name with a colon right after it as
      // one token, so XLA takes it, with or without attributes after.
      if (p_ < end_ && *p_ == ':') ++p_;
      while (Consume(',')) {
        if (!ParseHeaderAttribute()) return false;
      }
    }
    if (!ParseStackFrameSections()) return false;
    ReserveForRemainingText();
    if (!ParseBody()) return false;
    if (module->computations.empty()) {
      return Error(module_start, "module has no computations");
    }

    // Calls may name computations defined later in the file.
    for (const PendingCallee& pending : pending_callees_) {
      const uint32_t* id = computation_ids_.Find(pending.name, HashView(pending.name));
      if (id == nullptr) {
        return Error(pending.where, absl::StrCat("computation '", pending.name,
                                                 "' is not defined"));
      }
      module->callee_pool[pending.slot].computation = *id;
    }

    if (module->entry == kNoId) {
      module->entry = static_cast<CompId>(module->computations.size() - 1);
      module->computations.back().is_entry = true;
    }
    // As many threads as parts: a module too small to cut is not worth more.
    std::optional<ScopedPhase> phase(std::in_place, "parse: derived tables");
    module->Finalize(parts_);
    phase.reset();
    if (options_.parts_used != nullptr) *options_.parts_used = parts_;
    if (released_ > 0) {
      phase.emplace("parse: copying names, giving back the text");
      // The reports name the buffers of unfused instructions long after
      // parsing; reading those names from the released text would bring a
      // large module's entry computation back into memory.
      module->OwnNamesOutsideFusions();
      file_->ReleasePages(static_cast<size_t>(module_start - begin_),
                          static_cast<size_t>(p_ - begin_));
    }
    return true;
  }

  // Parses computations up to the end of the text, or to the next module.
  bool ParseComputations() {
    if (starts_in_body_ && !ParseContinuation()) return false;
    while (true) {
      SkipSpace();
      if (p_ == end_ || PeekKeyword("HloModule")) return true;
      if (!ParseComputation()) return false;
      ReleaseParsedText();
    }
  }

  // ---- one module on several threads -----------------------------------------
  // A large module's text is cut between computations into parts, which
  // parsers of their own turn into modules of their own on separate
  // threads; these are then appended to this one, their ids shifted. The
  // result is the module the sequential parse builds: computations are
  // independent but for the names of their callees, resolved at the end
  // anyway, and shapes and shared metadata are merged in text order. Any
  // error, or a cut that turns out not to fall between computations, starts
  // the body over sequentially, whose diagnostics are then the ones given.
  bool ParseBody() {
    parts_ = 1;
    SkipSpace();
    const std::vector<Cut> cuts = FindCuts();
    if (cuts.empty()) return ParseComputations();
    const char* body_start = p_;
    const ShapeTable shapes_before = module_->shapes;
    if (ParseInParts(cuts)) return true;
    ScopedPhase phase("parse: text again, sequentially");
    ClearBody(shapes_before);
    parts_ = 1;
    p_ = body_start;
    error_ = absl::OkStatus();
    return ParseComputations();
  }

  // Where to cut the rest of the text into parts of about equal size. A cut
  // is the start of a computation if one is near, found by how printers lay
  // them out: a line holding only '}', blank lines, then a line that starts
  // in the first column with a name and ends with '{'. Otherwise (a body
  // larger than a part, as a train step's entry is) it is the start of an
  // indented line inside a body. A cut that is wrong only costs time: the
  // parts then fail to parse and the body is parsed again.
  std::vector<Cut> FindCuts() const {
    std::vector<Cut> cuts;
    const auto size = static_cast<size_t>(end_ - p_);
    const size_t parts = std::min<size_t>(static_cast<size_t>(std::max(options_.threads, 1)),
                                          size / std::max<size_t>(options_.min_part_bytes, 1));
    if (parts < 2) return cuts;
    const size_t near = size / parts / 4;
    const char* from = p_;
    // Where the last scan for compact operands stopped, and what it found
    // there: a cut before that point, in the same body, would find the same.
    const char* scanned_to = nullptr;
    bool compact_ahead = false;
    for (size_t k = 1; k < parts; ++k) {
      const char* target = std::max(from, p_ + size / parts * k);
      const char* limit = target + std::min(near, static_cast<size_t>(end_ - target));
      Cut cut = {ComputationStartAfter(target, limit), false};
      if (cut.at == nullptr) {
        const char* line = IndentedLineAfter(target);
        if (line != nullptr && (scanned_to == nullptr || line >= scanned_to)) {
          scanned_to = ScanForCompactOperand(line, &compact_ahead);
        }
        if (line != nullptr && !compact_ahead) {
          cut = {line, true};
        } else {
          cut = {ComputationStartAfter(limit, end_), false};
        }
      }
      if (cut.at == nullptr) break;
      cuts.push_back(cut);
      from = cut.at;
    }
    return cuts;
  }

  // The first computation start after q whose preceding '}' lies before
  // `limit`; nullptr if none.
  const char* ComputationStartAfter(const char* q, const char* limit) const {
    while (q < limit) {
      q = FindLineClosingBrace(q, limit);
      if (q == nullptr) return nullptr;
      q += 2;
      if (q < end_ && *q == '\r') ++q;
      if (q == end_ || *q != '\n') continue;
      const char* line = q;
      while (line < end_ && IsBlank(*line)) ++line;
      if (line == end_ || line[-1] != '\n' || !(IsNameStart(*line) || *line == '%')) continue;
      const char* line_end = static_cast<const char*>(
          std::memchr(line, '\n', static_cast<size_t>(end_ - line)));
      if (line_end == nullptr) return nullptr;
      const char* last = line_end;
      while (last > line && IsBlank(last[-1])) --last;
      if (last > line && last[-1] == '{' &&
          absl::string_view(line, static_cast<size_t>(line_end - line)).substr(0, 9) != "HloModule") {
        return line;
      }
      q = line_end;
    }
    return nullptr;
  }

  // The first "\n}" starting in [q, limit), 16 bytes a step; nullptr if none.
  const char* FindLineClosingBrace(const char* q, const char* limit) const {
    while (q + 17 <= end_ && q < limit) {
      const uint32_t hits = ByteMask16(q, '\n') & ByteMask16(q + 1, '}');
      if (hits != 0) {
        const char* hit = q + __builtin_ctz(hits);
        return hit < limit ? hit : nullptr;
      }
      q += 16;
    }
    for (; q + 1 < end_ && q < limit; ++q) {
      if (q[0] == '\n' && q[1] == '}') return q;
    }
    return nullptr;
  }

  // Whether a compact operand ("x#1") is written between q and the end of
  // the body q is in (*compact), and where the scan stopped: at that
  // operand's '#', or at the body's end. A part starting at q cannot tell
  // whether the get-tuple-element a compact operand stands for exists
  // already, nor its shape, when the tuple lies before q: a cut there would
  // fall back to the sequential parse.
  const char* ScanForCompactOperand(const char* q, bool* compact) const {
    *compact = false;
    // One pass for both: the body's end ("\n}") and a '#' then a digit.
    while (q + 17 <= end_) {
      const uint32_t hits =
          ByteMask16(q, '#') | (ByteMask16(q, '\n') & ByteMask16(q + 1, '}'));
      for (uint32_t rest = hits; rest != 0; rest &= rest - 1) {
        const char* hit = q + __builtin_ctz(rest);
        if (*hit == '\n') return hit;
        if (IsDigit(hit[1])) {
          *compact = true;
          return hit;
        }
      }
      q += 16;
    }
    for (; q + 1 < end_; ++q) {
      if (q[0] == '\n' && q[1] == '}') return q;
      if (q[0] == '#' && IsDigit(q[1])) {
        *compact = true;
        return q;
      }
    }
    return end_;
  }

  // The start of the first line after q that is indented and then begins
  // with a name: an instruction's, inside a body.
  const char* IndentedLineAfter(const char* q) const {
    while (q < end_) {
      const auto* newline =
          static_cast<const char*>(std::memchr(q, '\n', static_cast<size_t>(end_ - q)));
      if (newline == nullptr) return nullptr;
      const char* line = newline + 1;
      const char* c = line;
      while (c < end_ && (*c == ' ' || *c == '\t')) ++c;
      if (c > line && c < end_ && (IsNameStart(*c) || *c == '%')) return line;
      q = line;
    }
    return nullptr;
  }

  // Parses the body in parts, the first here and the others on their own
  // threads, and appends the others' modules to this one. False when the
  // body must be parsed again sequentially.
  bool ParseInParts(const std::vector<Cut>& cuts) {
    std::vector<std::unique_ptr<TextParser>> workers;
    std::vector<Module> part_modules(cuts.size());
    for (size_t k = 0; k < cuts.size(); ++k) {
      workers.push_back(std::make_unique<TextParser>(file_, options_));
      const Cut part_end = k + 1 < cuts.size() ? cuts[k + 1] : Cut{end_, false};
      workers.back()->StartPart(&part_modules[k], cuts[k], part_end);
    }
    std::vector<char> parsed(cuts.size() + 1, 0);
    const char* const text_end = end_;
    end_ = cuts[0].at;
    ends_in_body_ = cuts[0].in_body;
    std::optional<ScopedPhase> phase(std::in_place, "parse: text in parts");
    ParallelFor(parsed.size(), [&](size_t k) {
      parsed[k] = k == 0 ? ParseComputations() : workers[k - 1]->ParseComputations();
    }, parsed.size());
    phase.emplace("parse: appending the parts");
    end_ = text_end;
    ends_in_body_ = false;
    // Parts are used in order until one ends before its cut: there the
    // module ends (at the next "HloModule"), and later parts are not its.
    if (!parsed[0]) return false;
    if (p_ != cuts[0].at) return true;
    // The segments of the body cut last, until its end is appended.
    std::vector<BodySegment> body;
    if (open_.has_value()) body.push_back(*std::exchange(open_, std::nullopt));
    for (size_t k = 0; k < workers.size(); ++k) {
      TextParser& worker = *workers[k];
      if (!parsed[k + 1] || !AppendPart(&part_modules[k], &worker, &body)) return false;
      p_ = worker.p_;
      // The text the worker gave back counts as given back here too.
      released_ = std::max(released_, worker.released_);
      parts_ = static_cast<int>(k + 2);
      if (p_ != worker.end_) break;
    }
    return body.empty();
  }

  // Makes this parser parse [from, to) into `part`, for ParseInParts.
  void StartPart(Module* part, Cut from, Cut to) {
    module_ = part;
    part->source = file_;
    part->metadata.emplace_back();  // index 0: no metadata
    p_ = from.at;
    end_ = to.at;
    starts_in_body_ = from.in_body;
    ends_in_body_ = to.in_body;
    released_ = static_cast<size_t>(from.at - begin_);
    ReserveForRemainingText();
  }

  // Appends the computations a worker parsed into `part` to this module,
  // shifting its ids to follow this module's. False on a second ENTRY or a
  // computation name defined twice (errors the sequential parse reports).
  // `body` holds the segments of a body cut by the parts before, which
  // the worker's part continues; it is settled once its end is appended.
  bool AppendPart(Module* part, TextParser* worker, std::vector<BodySegment>* body) {
    // A part starts inside a body exactly when the previous one ended inside.
    if (worker->continued_.has_value() == body->empty()) return false;
    Module& m = *module_;
    const CompId continued = body->empty() ? kNoId : body->front().computation;
    const auto instr_base = static_cast<InstrId>(m.instructions.size());
    const auto comp_base = static_cast<CompId>(m.computations.size());
    const auto operand_base = static_cast<uint32_t>(m.operand_pool.size());
    const auto callee_base = static_cast<uint32_t>(m.callee_pool.size());
    const auto predecessor_base = static_cast<uint32_t>(m.control_predecessor_pool.size());
    const auto attribute_base = static_cast<uint32_t>(m.attribute_pool.size());
    const auto alias_base = static_cast<uint32_t>(m.output_operand_alias_pool.size());
    const auto dimension_base = static_cast<uint32_t>(m.dimension_pool.size());

    for (const Computation& c : part->computations) {
      const auto id = static_cast<CompId>(m.computations.size());
      if (!computation_ids_.TryEmplace(c.name, HashView(c.name), id).second) return false;
      if (c.is_entry) {
        if (m.entry != kNoId) return false;
        m.entry = id;
      }
      Computation& added = m.computations.emplace_back(c);
      added.first_instruction += instr_base;
      added.root += instr_base;
    }
    // Shapes in id order: a tuple's elements were interned before it.
    std::vector<ShapeId> shape_ids(part->shapes.size());
    for (ShapeId s = 0; s < part->shapes.size(); ++s) {
      Shape shape = part->shapes.get(s);
      for (ShapeId& element : shape.tuple_elements) element = shape_ids[element];
      absl::StatusOr<ShapeId> id = m.shapes.Intern(std::move(shape));
      if (!id.ok()) return false;
      shape_ids[s] = *id;
    }
    // A metadata text this module already has is shared, as the sequential
    // parse would have shared it.
    std::vector<uint32_t> metadata_ids(part->metadata.size(), 0);
    for (size_t k = 1; k < part->metadata.size(); ++k) {
      const OpMetadata& metadata = part->metadata[k];
      const auto next = static_cast<uint32_t>(m.metadata.size());
      if (!metadata.text.empty()) {
        const auto known = metadata_ids_.TryEmplace(metadata.text, HashView(metadata.text), next);
        if (!known.second) {
          metadata_ids[k] = *known.first;
          continue;
        }
      }
      metadata_ids[k] = next;
      m.metadata.push_back(metadata);
    }
    uint32_t extras_base = 0;
    if (part->extras.size() > 1) {
      if (m.extras.empty()) m.extras.emplace_back();
      extras_base = static_cast<uint32_t>(m.extras.size() - 1);
      for (size_t k = 1; k < part->extras.size(); ++k) {
        InstructionExtras& e = m.extras.emplace_back(part->extras[k]);
        e.callees_begin += callee_base;
        e.control_predecessors_begin += predecessor_base;
        e.output_operand_aliases_begin += alias_base;
      }
    }

    // The instructions are about half the bytes, the pools the other half:
    // appended side by side.
    ParallelFor(2, [&](size_t k) {
      if (k == 0) {
        AppendReleasing(&m.instructions, &part->instructions, [&](Instruction& i) {
          // The instructions a part starts with inside a body are that body's.
          i.parent = i.parent == kNoId ? continued : i.parent + comp_base;
          i.shape = shape_ids[i.shape];
          i.operands_begin += operand_base;
          i.attributes_begin += attribute_base;
          i.dimensions_begin += dimension_base;
          i.metadata = metadata_ids[i.metadata];
          if (i.extras != 0) i.extras += extras_base;
        });
        return;
      }
      AppendReleasing(&m.operand_pool, &part->operand_pool, [&](InstrId& id) { id += instr_base; });
      AppendReleasing(&m.attribute_pool, &part->attribute_pool, [](Attribute&) {});
      AppendReleasing(&m.dimension_pool, &part->dimension_pool, [](int64_t&) {});
      AppendReleasing(&m.control_predecessor_pool, &part->control_predecessor_pool,
                      [&](InstrId& id) { id += instr_base; });
      // Callees not found in the part wait, with this module's, for the end.
      AppendReleasing(&m.callee_pool, &part->callee_pool, [&](Callee& c) {
        if (c.computation != kNoId) c.computation += comp_base;
      });
    }, part->instructions.size() >= kAppendSideBySideFrom ? 2 : 1);
    for (PendingCallee pending : worker->pending_callees_) {
      pending.slot += callee_base;
      pending_callees_.push_back(pending);
    }
    m.output_operand_alias_pool.insert(m.output_operand_alias_pool.end(),
                                       part->output_operand_alias_pool.begin(),
                                       part->output_operand_alias_pool.end());
    m.AdoptOwnedText(part);

    if (worker->continued_.has_value()) {
      BodySegment& segment = body->emplace_back(*std::exchange(worker->continued_, std::nullopt));
      ShiftSegment(&segment, instr_base, operand_base, predecessor_base, shape_ids);
      m.computations[continued].instruction_count += segment.end - segment.first;
      if (segment.closed && !CloseBody(body)) return false;
    }
    if (worker->open_.has_value()) {
      if (!body->empty()) return false;
      BodySegment& segment = body->emplace_back(*std::exchange(worker->open_, std::nullopt));
      ShiftSegment(&segment, instr_base, operand_base, predecessor_base, shape_ids);
      segment.computation += comp_base;
    }
    return true;
  }

  // Smaller parts are appended faster than a thread starts.
  static constexpr size_t kAppendSideBySideFrom = size_t{1} << 16;  // instructions

  // Appends `from` to `to`, calling `shift` on each appended element, and
  // gives `from`'s memory back as it goes: the parts of a 1 GB module then
  // never stand in memory twice. Chunks small enough to stay in cache
  // between the copy and the shift; each faulted in with one call.
  template <typename T, typename Fn>
  static void AppendReleasing(std::vector<T>* to, std::vector<T>* from, Fn&& shift) {
    static_assert(std::is_trivially_copyable_v<T>);
    constexpr size_t kChunk = (size_t{256} << 10) / sizeof(T);
    to->reserve(to->size() + from->size());
    for (size_t begin = 0; begin < from->size(); begin += kChunk) {
      const size_t end = std::min(from->size(), begin + kChunk);
      const size_t at = to->size();
      Populate(to->data() + at, to->data() + at + (end - begin));
      to->insert(to->end(), from->begin() + static_cast<ptrdiff_t>(begin),
                 from->begin() + static_cast<ptrdiff_t>(end));
      for (size_t k = at; k < to->size(); ++k) shift((*to)[k]);
      Release(from->data() + begin, from->data() + end);
    }
    std::vector<T>().swap(*from);
  }

  // Faults in the pages of [begin, end) with one call, ahead of writing it.
  // Best effort: where the kernel refuses, pages fault in one by one.
  static void Populate(const void* begin, const void* end) {
#ifdef MADV_POPULATE_WRITE
    const uintptr_t from = reinterpret_cast<uintptr_t>(begin) & ~(kPage - 1);
    const uintptr_t to = (reinterpret_cast<uintptr_t>(end) + kPage - 1) & ~(kPage - 1);
    if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_POPULATE_WRITE);
#else
    (void)begin;
    (void)end;
#endif
  }

  // Gives back the whole pages inside [begin, end), no longer read: they
  // would read as zeros, and nothing reads them before they are freed.
  static void Release(const void* begin, const void* end) {
    const uintptr_t from = (reinterpret_cast<uintptr_t>(begin) + kPage - 1) & ~(kPage - 1);
    const uintptr_t to = reinterpret_cast<uintptr_t>(end) & ~(kPage - 1);
    if (to > from) ::madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
  }
  static constexpr uintptr_t kPage = 4096;

  // Undoes a parse in parts that failed, back to the module's header.
  void ClearBody(const ShapeTable& shapes_before) {
    Module& m = *module_;
    m.computations.clear();
    m.instructions.clear();
    m.operand_pool.clear();
    m.callee_pool.clear();
    m.control_predecessor_pool.clear();
    m.attribute_pool.clear();
    m.output_operand_alias_pool.clear();
    m.dimension_pool.clear();
    m.metadata.resize(1);
    m.extras.clear();
    m.shapes = shapes_before;
    m.entry = kNoId;
    shape_cache_.Clear();
    previous_shape_text_ = {};
    std::fill(std::begin(agreeing_pairs_), std::end(agreeing_pairs_), 0);
    computation_ids_.Clear();
    metadata_ids_.Clear();
    pending_callees_.clear();
    open_.reset();
    for (uintptr_t& done : prefaulted_) done = 0;
  }

  static constexpr size_t kReleaseStep = size_t{64} << 20;
  // The names reports quote are copied before the text they view is given
  // back (OwnNamesOutsideFusions copies the rest at the end, reading them
  // back from the page cache): those of the bodies known to be unfused and
  // large, the entry's and any body cut between parts.
  void OwnNamesBeforeRelease(InstrId begin, InstrId end) {
    if (file_->data().size() >= kReleaseStep) module_->OwnNames(begin, end);
  }

  // Parsed text need not stay resident beside the model of a 1 GB module:
  // the views into it read back from the page cache when something (a
  // report row, a diagnostic) touches them.
  void ReleaseParsedText() {
    const auto parsed = static_cast<size_t>(p_ - begin_);
    if (parsed < released_ + kReleaseStep) return;
    file_->ReleasePages(released_, parsed);
    released_ = parsed;
  }

  // Sizes the module's vectors from a sample of the text left, so a large
  // module is built without regrowing (each regrowth copies and, for a
  // moment, doubles the biggest arrays). Capacity never written to stays
  // untouched address space, so overestimates cost no memory.
  void ReserveForRemainingText() {
    constexpr size_t kWindow = 64 << 10;
    const size_t remaining = static_cast<size_t>(end_ - p_);
    if (remaining < 4 * kWindow) return;
    size_t most_lines = 0;
    for (const size_t at : {size_t{0}, remaining / 2, remaining - kWindow}) {
      const char* window = p_ + at;
      most_lines = std::max<size_t>(most_lines, std::count(window, window + kWindow, '\n'));
    }
    const size_t lines = remaining / kWindow * most_lines * 5 / 4;
    module_->instructions.reserve(lines);
    module_->operand_pool.reserve(lines * 2);
    module_->attribute_pool.reserve(lines);
    module_->metadata.reserve(lines);
    module_->dimension_pool.reserve(lines);
    prefault_ = true;
    for (uintptr_t& done : prefaulted_) done = 0;
  }

  // Faults in the next stretch of a big pool's reserved capacity with one
  // call once the pool nears the end of what was faulted in before:
  // written a page at a time, a 1 GB module takes a page fault per 4 KiB.
  // Ahead by as much as the pool holds already, up to 2 MiB: a module of a
  // few MB is not made to fault in much more than it fills.
  template <typename T>
  static void PrefaultAhead(const std::vector<T>& pool, uintptr_t* done) {
    const uintptr_t stretch = std::clamp<uintptr_t>(pool.size() * sizeof(T), uintptr_t{64} << 10,
                                                    uintptr_t{2} << 20);
    const uintptr_t used = reinterpret_cast<uintptr_t>(pool.data() + pool.size());
    if (used + stretch / 2 < *done) return;
    const uintptr_t limit = reinterpret_cast<uintptr_t>(pool.data() + pool.capacity()) & ~(kPage - 1);
    const uintptr_t from = std::max(*done, (used + kPage - 1) & ~(kPage - 1));
    const uintptr_t to = std::min(limit, from + stretch);
    if (to > from) Populate(reinterpret_cast<const void*>(from), reinterpret_cast<const void*>(to));
    *done = std::max(to, used + stretch);
  }

  // header attribute ::= name '=' value
  bool ParseHeaderAttribute() {
    absl::string_view key, value;
    if (!LexName(&key, "a module attribute")) return false;
    if (!Expect('=')) return false;
    SkipSpace();
    const char* value_start = p_;
    if (!LexAttributeValue(&value)) return false;
    module_->header_attributes.push_back({key, value});
    if (key == "is_scheduled") {
      module_->is_scheduled = value == "true";
    } else if (key == "entry_computation_layout") {
      module_->entry_computation_layout = value;
    } else if (key == "input_output_alias") {
      return ParseSubvalue(value_start, value, [&] { return ParseInputOutputAlias(); });
    } else if (key == "buffer_donor") {
      return ParseSubvalue(value_start, value, [&] { return ParseBufferDonors(); });
    }
    return true;
  }

  // Re-reads an attribute value already scanned, with a dedicated grammar.
  template <typename Fn>
  bool ParseSubvalue(const char* start, absl::string_view value, Fn&& parse) {
    const char* saved_p = p_;
    const char* saved_end = end_;
    p_ = start;
    end_ = start + value.size();
    bool ok = parse();
    if (ok) {
      SkipSpace();
      if (p_ != end_) ok = Error(p_, "unexpected text after attribute value");
    }
    p_ = saved_p;
    end_ = saved_end;
    return ok;
  }

  // '{' ( shape_index ':' '(' int ',' shape_index (',' kind)? ')' ','? )* '}'
  bool ParseInputOutputAlias() {
    if (!Expect('{')) return false;
    while (!Consume('}')) {
      InputOutputAlias alias;
      if (!ParseShapeIndex(&alias.output_index) || !Expect(':') || !Expect('(') ||
          !LexInt(&alias.parameter, "a parameter number") || !Expect(',') ||
          !ParseShapeIndex(&alias.parameter_index)) {
        return false;
      }
      if (Consume(',')) {
        absl::string_view kind;
        if (!LexName(&kind, "may-alias or must-alias")) return false;
        if (kind == "may-alias") {
          alias.kind = AliasKind::kMayAlias;
        } else if (kind == "must-alias") {
          alias.kind = AliasKind::kMustAlias;
        } else {
          return Error(kind.data(), absl::StrCat("unknown alias kind '", kind, "'"));
        }
      }
      if (!Expect(')')) return false;
      module_->input_output_aliases.push_back(std::move(alias));
      Consume(',');
    }
    return true;
  }

  // '{' ( '(' int ',' shape_index ')' ','? )* '}'
  bool ParseBufferDonors() {
    if (!Expect('{')) return false;
    while (!Consume('}')) {
      BufferDonor donor;
      if (!Expect('(') || !LexInt(&donor.parameter, "a parameter number") ||
          !Expect(',') || !ParseShapeIndex(&donor.parameter_index) || !Expect(')')) {
        return false;
      }
      module_->buffer_donors.push_back(std::move(donor));
      Consume(',');
    }
    return true;
  }

  // FileNames / FunctionNames / FileLocations / StackFrames sections:
  //   section ::= keyword (id entry)*     with ids 1, 2, 3, ... in order
  bool ParseStackFrameSections() {
    StackFrameIndex& index = module_->stack_frames;
    while (true) {
      if (ConsumeKeyword("FileNames")) {
        if (!ParseStringTable(&index.file_names)) return false;
      } else if (ConsumeKeyword("FunctionNames")) {
        if (!ParseStringTable(&index.function_names)) return false;
      } else if (ConsumeKeyword("FileLocations")) {
        int64_t expected = 1;
        while (PeekDigit()) {
          if (!ExpectId(expected++) || !Expect('{')) return false;
          StackFrameIndex::FileLocation loc;
          while (!Consume('}')) {
            absl::string_view key;
            int64_t value = 0;
            if (!LexName(&key, "a file location field") || !Expect('=') || !LexInt(&value)) {
              return false;
            }
            if (key == "file_name_id") loc.file_name_id = value;
            else if (key == "function_name_id") loc.function_name_id = value;
            else if (key == "line") loc.line = value;
            else if (key == "end_line") loc.end_line = value;
            else if (key == "column") loc.column = value;
            else if (key == "end_column") loc.end_column = value;
            Consume(',');
          }
          index.file_locations.push_back(loc);
        }
      } else if (ConsumeKeyword("StackFrames")) {
        int64_t expected = 1;
        while (PeekDigit()) {
          if (!ExpectId(expected++) || !Expect('{')) return false;
          StackFrameIndex::Frame frame;
          while (!Consume('}')) {
            absl::string_view key;
            int64_t value = 0;
            if (!LexName(&key, "a stack frame field") || !Expect('=') || !LexInt(&value)) {
              return false;
            }
            if (key == "file_location_id") frame.file_location_id = value;
            else if (key == "parent_frame_id") frame.parent_frame_id = value;
            Consume(',');
          }
          index.frames.push_back(frame);
        }
      } else {
        return true;
      }
    }
  }
  bool PeekDigit() {
    SkipSpace();
    return p_ < end_ && IsDigit(*p_);
  }
  bool ExpectId(int64_t expected) {
    const char* at = p_;
    int64_t id = 0;
    if (!LexInt(&id)) return false;
    if (id != expected) {
      return Error(at, absl::StrCat("expected entry ", expected, ", found ", id));
    }
    return true;
  }
  bool ParseStringTable(std::vector<absl::string_view>* table) {
    int64_t expected = 1;
    while (PeekDigit()) {
      absl::string_view s;
      if (!ExpectId(expected++) || !LexString(&s)) return false;
      table->push_back(s);
    }
    return true;
  }

  // ---- computations ----------------------------------------------------------
  // computation ::= 'ENTRY'? name program_shape? '{' instruction* '}'
  //                 (',' 'execution_thread' '=' string)?
  bool ParseComputation() {
    SkipSpace();
    const char* start = p_;
    const bool is_entry = ConsumeKeyword("ENTRY");
    Computation comp;
    if (!LexName(&comp.name, "a computation name")) return false;
    comp.is_entry = is_entry;
    comp.source_offset = static_cast<uint64_t>(start - begin_);

    signature_parameters_.clear();
    signature_result_ = kNoShape;
    if (Peek('(')) {  // program shape: (p: shape, ...) -> shape
      if (!ParseSignatureParameters()) return false;
      SkipSpace();
      if (!(p_ + 1 < end_ && p_[0] == '-' && p_[1] == '>')) {
        return Expected("'->' after the computation's parameters");
      }
      p_ += 2;
      if (!ParseShape(&signature_result_)) return false;
    }
    if (!Expect('{')) return false;

    const CompId id = static_cast<CompId>(module_->computations.size());
    // Calls look computations up by name until the end of the module; a
    // copy of the name keeps those lookups off the released input pages.
    comp.name = module_->Own(comp.name);
    if (!computation_ids_.TryEmplace(comp.name, HashView(comp.name), id).second) {
      return Error(start, absl::StrCat("computation '", comp.name, "' is already defined"));
    }
    if (is_entry) {
      if (module_->entry != kNoId) {
        return Error(start, "module has more than one ENTRY computation");
      }
      module_->entry = id;
    }
    comp.first_instruction = static_cast<InstrId>(module_->instructions.size());
    module_->computations.push_back(comp);
    StartBody();

    InstrId root = kNoId;
    const char* root_where = nullptr;
    bool at_cut = false;
    if (!ParseInstructions(id, start, comp.name, &root, &root_where, &at_cut)) return false;
    if (at_cut) return OpenBodyAtCut(id, root);
    if (root == kNoId) root_where = shape_where_;
    Computation& stored = module_->computations[id];
    stored.instruction_count =
        static_cast<uint32_t>(module_->instructions.size()) - stored.first_instruction;
    if (stored.instruction_count == 0) {
      return Error(start, absl::StrCat("computation '", comp.name, "' has no instructions"));
    }
    // Without ROOT (accepted by XLA's parser), the last instruction is the root.
    stored.root = root != kNoId ? root : static_cast<InstrId>(module_->instructions.size() - 1);
    module_->instructions[stored.root].is_root = true;
    if (is_entry) {
      OwnNamesBeforeRelease(stored.first_instruction,
                            stored.first_instruction + stored.instruction_count);
    }

    if (!ResolveBodyNames(nullptr)) return false;
    const Instruction& root_instr = module_->instructions[stored.root];
    if (signature_result_ != kNoShape &&
        !ShapesAgree(signature_result_, root_instr.shape)) {
      return Error(root_where,
                   absl::StrCat("root '", root_instr.name, "' has shape ",
                                module_->shapes.ToString(root_instr.shape), ", but computation '",
                                comp.name, "' declares its result as ",
                                module_->shapes.ToString(signature_result_)));
    }

    return ParseComputationAttribute(&module_->computations[id].execution_thread);
  }

  // ---- bodies cut between parts -----------------------------------------------
  // Ends the part inside the body of computation `id`, at its cut: the rest
  // of the body is the next part's (continued_ there).
  bool OpenBodyAtCut(CompId id, InstrId root) {
    Computation& stored = module_->computations[id];
    stored.instruction_count =
        static_cast<uint32_t>(module_->instructions.size()) - stored.first_instruction;
    BodySegment& segment = open_.emplace();
    segment.computation = id;
    segment.first = stored.first_instruction;
    segment.end = static_cast<InstrId>(module_->instructions.size());
    segment.root = root;
    segment.signature_parameters = signature_parameters_;
    segment.signature_result = signature_result_;
    if (!ResolveBodyNames(&segment)) return false;
    OwnNamesBeforeRelease(segment.first, segment.end);
    return true;
  }

  // Parses the instructions a part starts with, inside a body another part
  // opened, up to the body's '}' and attribute (or to the part's end).
  bool ParseContinuation() {
    StartBody();
    const char* start = p_;
    BodySegment& segment = continued_.emplace();
    segment.first = static_cast<InstrId>(module_->instructions.size());
    const char* root_where = nullptr;
    bool at_cut = false;
    if (!ParseInstructions(kNoId, start, "", &segment.root, &root_where, &at_cut)) return false;
    segment.end = static_cast<InstrId>(module_->instructions.size());
    segment.closed = !at_cut;
    if (!ResolveBodyNames(&segment)) return false;
    OwnNamesBeforeRelease(segment.first, segment.end);
    return !segment.closed || ParseComputationAttribute(&segment.execution_thread);
  }

  // Resolves the names the body's instructions wait on (operands and
  // control predecessors may refer forward) with the body's own map, at its
  // end. For a whole body (`segment` null) a name not found is an error; a
  // segment keeps it, with the map, for CloseBody.
  bool ResolveBodyNames(BodySegment* segment) {
    if (!FlushDeferredNames()) return false;
    // The slots are loaded a few lookups ahead: in a large computation's
    // map each would miss the cache.
    constexpr size_t kAhead = 8;
    for (size_t k = 0; k < std::min(kAhead, pending_operands_.size()); ++k) {
      instruction_ids_.Prefetch(pending_operands_[k].hash);
    }
    for (size_t k = 0; k < pending_operands_.size(); ++k) {
      if (k + kAhead < pending_operands_.size()) {
        instruction_ids_.Prefetch(pending_operands_[k + kAhead].hash);
      }
      const PendingName& pending = pending_operands_[k];
      if (const uint32_t* it = instruction_ids_.Find(pending.name, pending.hash)) {
        module_->operand_pool[pending.slot] = *it;
      } else if (segment != nullptr) {
        segment->operands.push_back(pending);
      } else {
        return Error(pending.where, absl::StrCat("use of undefined instruction '",
                                                 pending.name, "'"));
      }
    }
    for (const DeclaredOperand& declared : declared_later_) {
      const InstrId operand = module_->operand_pool[declared.slot];
      if (operand == kNoId) {  // a name only a segment leaves open
        if (segment != nullptr) segment->declared.push_back(declared);
      } else if (!CheckDeclaredShape(declared.shape, operand, declared.where)) {
        return false;
      }
    }
    for (const PendingName& pending : pending_predecessors_) {
      if (const uint32_t* it = instruction_ids_.Find(pending.name, pending.hash)) {
        module_->control_predecessor_pool[pending.slot] = *it;
      } else if (segment != nullptr) {
        segment->predecessors.push_back(pending);
      } else {
        return Error(pending.where, absl::StrCat("control predecessor '", pending.name,
                                                 "' is not defined"));
      }
    }
    if (segment != nullptr) segment->names = std::exchange(instruction_ids_, ViewMap());
    return true;
  }

  // A worker's segment, appended to this module: ids, slots and shapes
  // shifted as AppendPart shifted the rest of its part.
  static void ShiftSegment(BodySegment* segment, InstrId instr_base, uint32_t operand_base,
                           uint32_t predecessor_base, const std::vector<ShapeId>& shape_ids) {
    segment->first += instr_base;
    segment->end += instr_base;
    if (segment->root != kNoId) segment->root += instr_base;
    segment->id_base = instr_base;
    for (PendingName& pending : segment->operands) pending.slot += operand_base;
    for (PendingName& pending : segment->predecessors) pending.slot += predecessor_base;
    for (DeclaredOperand& declared : segment->declared) {
      declared.slot += operand_base;
      declared.shape = shape_ids[declared.shape];
    }
    if (segment->signature_result != kNoShape) {
      segment->signature_result = shape_ids[segment->signature_result];
    }
  }

  // The id a name has in one of the body's segments other than `own`.
  static bool FindInOtherSegments(const std::vector<BodySegment>& body, size_t own,
                                  const PendingName& pending, InstrId* id) {
    for (size_t k = 0; k < body.size(); ++k) {
      if (k == own) continue;
      if (const uint32_t* it = body[k].names.Find(pending.name, pending.hash)) {
        *id = *it + body[k].id_base;
        return true;
      }
    }
    return false;
  }

  // Whether two name maps share a name: the smaller's names looked up in
  // the larger, in ranges side by side.
  bool ShareAName(const ViewMap& a, const ViewMap& b) const {
    const ViewMap& smaller = a.size() <= b.size() ? a : b;
    const ViewMap& larger = a.size() <= b.size() ? b : a;
    constexpr size_t kSlotsPerRange = size_t{1} << 16;
    const size_t ranges = (smaller.slot_count() + kSlotsPerRange - 1) / kSlotsPerRange;
    std::vector<char> shared(ranges, 0);
    ParallelFor(ranges, [&](size_t r) {
      const size_t from = r * kSlotsPerRange;
      shared[r] = smaller.SharesAKeyWith(larger, from,
                                         std::min(smaller.slot_count(), from + kSlotsPerRange));
    }, static_cast<size_t>(std::max(options_.threads, 1)));
    return std::find(shared.begin(), shared.end(), 1) != shared.end();
  }

  // Settles a body whose segments, appended in order, are all in this
  // module now: what the sequential parse checks and resolves at the body's
  // end. False where that parse would fail (it then runs, and reports).
  bool CloseBody(std::vector<BodySegment>* body_segments) {
    std::vector<BodySegment>& body = *body_segments;
    Module& m = *module_;
    const BodySegment& opening = body.front();
    Computation& comp = m.computations[opening.computation];
    // A name defined in two segments, looked for side by side: the maps of
    // a train step's entry hold millions.
    for (size_t k = 1; k < body.size(); ++k) {
      for (size_t earlier = 0; earlier < k; ++earlier) {
        if (ShareAName(body[earlier].names, body[k].names)) return false;
      }
      // Parameters against the signature: the text only. Where that
      // differs, the sequential parse reads the signature's shape, adding
      // it to the shape table at that point.
      for (const auto& [number, written] : body[k].parameters) {
        const auto n = static_cast<size_t>(number);
        if (n < opening.signature_parameters.size() &&
            !SignatureTextAgrees(opening.signature_parameters[n], written)) {
          return false;
        }
      }
    }
    for (size_t k = 0; k < body.size(); ++k) {
      for (const PendingName& pending : body[k].operands) {
        InstrId id;
        if (!FindInOtherSegments(body, k, pending, &id)) return false;
        m.operand_pool[pending.slot] = id;
      }
      for (const PendingName& pending : body[k].predecessors) {
        InstrId id;
        if (!FindInOtherSegments(body, k, pending, &id)) return false;
        m.control_predecessor_pool[pending.slot] = id;
      }
    }
    for (const BodySegment& segment : body) {
      for (const DeclaredOperand& declared : segment.declared) {
        if (!CheckDeclaredShape(declared.shape, m.operand_pool[declared.slot], declared.where)) {
          return false;
        }
      }
    }
    InstrId root = kNoId;
    for (const BodySegment& segment : body) {
      if (segment.root == kNoId) continue;
      if (root != kNoId) return false;
      root = segment.root;
    }
    if (comp.instruction_count == 0) return false;
    comp.root = root != kNoId ? root : body.back().end - 1;
    m.instructions[comp.root].is_root = true;
    if (opening.signature_result != kNoShape &&
        !ShapesAgree(opening.signature_result, m.instructions[comp.root].shape)) {
      return false;
    }
    comp.execution_thread = body.back().execution_thread;
    body.clear();
    return true;
  }

  // (',' 'execution_thread' '=' string)? after a body's '}'.
  bool ParseComputationAttribute(absl::string_view* execution_thread) {
    if (!Consume(',')) return true;
    absl::string_view key;
    if (!LexName(&key, "a computation attribute") || !Expect('=')) return false;
    if (key != "execution_thread") {
      return Error(key.data(), absl::StrCat("unknown computation attribute '", key, "'"));
    }
    return LexString(execution_thread);
  }

  // Clears what a body's parse keeps about the body, for the next one.
  void StartBody() {
    instruction_ids_.Clear();
    if (defer_names_) {
      for (DeferredName& recent : recent_names_) recent.name = {};
    }
    defer_names_ = false;
    deferred_names_.clear();
    previous_name_ = {};
    pending_operands_.clear();
    declared_later_.clear();
    pending_predecessors_.clear();
    // Left by an instruction that failed in a part, before the body is
    // parsed again.
    compact_operands_.clear();
  }

  // Parses a body's instructions up to its '}' (consumed), or up to the
  // part's end when the part is cut there (*at_cut). The cut must follow a
  // whole instruction and blanks only (not a comment), where the
  // sequential parse would read the next instruction.
  bool ParseInstructions(CompId id, const char* start, absl::string_view comp_name,
                         InstrId* root, const char** root_where, bool* at_cut) {
    const char* after_last = p_;
    while (!Consume('}')) {
      if (p_ == end_) {
        if (ends_in_body_ && std::all_of(after_last, end_, IsBlank)) {
          *at_cut = true;
          return true;
        }
        Error(start, "computation is missing its closing '}'");
        return ReportDeferredDuplicate();
      }
      const char* instr_start = p_;
      const bool is_root = ConsumeKeyword("ROOT");
      if (!ParseInstruction(id, instr_start)) return ReportDeferredDuplicate();
      after_last = p_;
      if (is_root) {
        if (*root != kNoId) {
          Error(instr_start, absl::StrCat("computation '", comp_name, "' has more than one ROOT"));
          return ReportDeferredDuplicate();
        }
        *root = static_cast<InstrId>(module_->instructions.size() - 1);
        *root_where = shape_where_;
      }
    }
    return true;
  }

  // '(' (name ':' shape (',' name ':' shape)*)? ')': the text of each
  // parameter's shape by number, for the parameter instructions to be
  // checked against. A list in any other form is skipped, checking nothing,
  // as the whole list was before it was read.
  bool ParseSignatureParameters() {
    const char* start = p_;
    if (ReadSignatureParameters()) return true;
    error_ = absl::OkStatus();
    signature_parameters_.clear();
    p_ = start;
    return SkipBalanced();
  }
  bool ReadSignatureParameters() {
    if (!Expect('(')) return false;
    if (Consume(')')) return true;
    do {
      absl::string_view name;
      if (!LexName(&name, "a parameter name") || !Expect(':')) return false;
      SkipSpace();
      const char* shape_start = p_;
      if (!ScanShapeExtent()) return false;
      signature_parameters_.emplace_back(shape_start, static_cast<size_t>(p_ - shape_start));
    } while (Consume(','));
    return Expect(')');
  }

  // ShapeTable::AgreeUpToMissingLayouts, remembering pairs of distinct ids
  // that agree: where one side's text leaves layouts out (operands, results
  // and parameters of some print styles), the same few pairs come back.
  bool ShapesAgree(ShapeId a, ShapeId b) {
    if (a == b) return true;
    const uint64_t pair = uint64_t{a} << 32 | b;
    uint64_t& known = agreeing_pairs_[(pair * 0x9e3779b97f4a7c15u) >> (64 - kAgreeingPairBits)];
    if (known == pair) return true;
    if (!module_->shapes.AgreeUpToMissingLayouts(a, b)) return false;
    known = pair;
    return true;
  }

  // A parameter's shape, written `written`, against the one the signature
  // gives it, if any. Usually settled on the text: the same, or the same but
  // for the parameter's layout, as XLA prints signatures without layouts.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool CheckSignatureParameter(const Instruction& parameter,
                                                            int32_t number,
                                                            absl::string_view written) {
    const auto k = static_cast<size_t>(number);
    if (k >= signature_parameters_.size()) {
      // In a body another part opened, the signature is that part's.
      if (ABSL_PREDICT_FALSE(continued_ && !continued_->closed)) {
        continued_->parameters.push_back({number, written});
      }
      return true;
    }
    const absl::string_view declared = signature_parameters_[k];
    if (SignatureTextAgrees(declared, written)) return true;
    return CheckSignatureParameterSlow(parameter, number, declared);
  }
  // The same text, or the same but for a layout the signature leaves out.
  static bool SignatureTextAgrees(absl::string_view declared, absl::string_view written) {
    const size_t n = declared.size();
    return written.size() >= n && SameBytes(written.data(), declared.data(), n) &&
           (written.size() == n || (declared.back() == ']' && written[n] == '{'));
  }
  ABSL_ATTRIBUTE_NOINLINE bool CheckSignatureParameterSlow(const Instruction& parameter,
                                                           int32_t number,
                                                           absl::string_view declared) {
    // The signature's text is read as a shape only now; one that does not
    // read as one checks nothing, as when signatures were skipped.
    const char* saved_p = p_;
    const char* saved_end = end_;
    p_ = declared.data();
    end_ = declared.data() + declared.size();
    ShapeId shape;
    const bool parsed = ParseShape(&shape) && p_ == end_;
    p_ = saved_p;
    end_ = saved_end;
    if (!parsed) {
      error_ = absl::OkStatus();
      return true;
    }
    if (ShapesAgree(shape, parameter.shape)) return true;
    return Error(shape_where_,
                 absl::StrCat("parameter '", parameter.name, "' has shape ",
                              module_->shapes.ToString(parameter.shape), ", but computation '",
                              module_->computations[parameter.parent].name,
                              "' declares parameter ", number, " as ",
                              module_->shapes.ToString(shape)));
  }

  // instruction ::= name '=' shape opcode '(' operands ')' (',' attribute)*
  bool ParseInstruction(CompId comp, const char* line_start) {
    SkipSpace();
    const char* start = p_;
    Instruction instr;
    InstructionExtras extras;
    instr.parent = comp;
    instr.set_source_offset(static_cast<uint64_t>(line_start - begin_));
    if (!LexName(&instr.name, "an instruction name")) return false;
    if (!Expect('=')) return false;
    SkipSpace();
    shape_where_ = p_;
    if (!ParseShape(&instr.shape)) return false;

    SkipSpace();
    const char* opcode_start = p_;
    absl::string_view opcode_text;
    if (!LexName(&opcode_text, "an opcode")) return false;
    const OpcodeSpelling spelling = LookUpOpcode(opcode_text);
    instr.opcode = spelling.opcode;
    if (instr.opcode == Opcode::kUnknown) {
      return Error(opcode_start, absl::StrCat("unknown opcode '", opcode_text, "'"));
    }
    if (spelling.unusual) extras.opcode_text = opcode_text;

    // The name is claimed now (one hash lookup) and gets its id once the
    // implicit get-tuple-elements of compact operands have theirs; in a
    // large computation it waits for the end of the body instead.
    const uint32_t name_hash = HashView(instr.name);
    if (ABSL_PREDICT_FALSE(instruction_ids_.size() >= kDeferNamesAfter)) defer_names_ = true;
    std::pair<uint32_t*, bool> claimed = {nullptr, true};
    if (defer_names_) {
      unclaimed_ = {instr.name, name_hash, kNoId};
    } else {
      claimed = instruction_ids_.TryEmplace(instr.name, name_hash, kNoId);
      if (!claimed.second) return DuplicateName(start, instr.name);
    }

    if (!Expect('(')) return false;
    // Fields found from here on go to the stored instruction, not to
    // `instr`: copying `instr` right after storing them would stall on
    // store forwarding.
    const auto operands_begin = static_cast<uint32_t>(module_->operand_pool.size());
    int32_t parameter_number = -1;
    if (instr.opcode == Opcode::kParameter) {
      if (!LexInt32(&parameter_number, "a parameter number")) return false;
      if (parameter_number < 0) {
        return Error(start, "parameter number must not be negative");
      }
      if (!Expect(')')) return false;
      // The last shape parsed is the parameter's own.
      if (!CheckSignatureParameter(instr, parameter_number, previous_shape_text_)) return false;
    } else if (instr.opcode == Opcode::kConstant) {
      SkipSpace();
      const char* literal_start = p_;
      int depth = 1;
      while (p_ < end_) {
        if (*p_ == '"') {
          absl::string_view ignored;
          if (!LexString(&ignored)) return false;
          continue;
        }
        if (*p_ == '(') ++depth;
        if (*p_ == ')' && --depth == 0) break;
        ++p_;
      }
      if (p_ == end_) return Error(literal_start - 1, "unbalanced '(' in constant");
      extras.literal = absl::string_view(literal_start, static_cast<size_t>(p_ - literal_start));
      while (!extras.literal.empty() &&
             absl::ascii_isspace(static_cast<unsigned char>(extras.literal.back()))) {
        extras.literal.remove_suffix(1);
      }
      ++p_;
    } else if (!Consume(')')) {
      do {
        if (!ParseOperand()) return false;
      } while (Consume(','));
      if (!Expect(')')) return false;
    }
    const auto operand_count =
        static_cast<uint32_t>(module_->operand_pool.size()) - operands_begin;
    if (compact_operands_.empty()) {
      const auto id = static_cast<InstrId>(module_->instructions.size());
      if (defer_names_) {
        deferred_names_.push_back({instr.name, name_hash, id});
        recent_names_[name_hash % kRecentNames] = deferred_names_.back();
        unclaimed_.name = {};
      } else {
        *claimed.first = id;
      }
    } else {
      if (defer_names_) {
        // Compact operands look names up as they go: the map takes every
        // name again, this one included, for the rest of the body.
        if (!FlushDeferredNames()) return false;
        defer_names_ = false;
        for (DeferredName& recent : recent_names_) recent.name = {};
        unclaimed_.name = {};
        if (!instruction_ids_.TryEmplace(instr.name, name_hash, kNoId).second) {
          return DuplicateName(start, instr.name);
        }
      }
      if (!MaterializeCompactOperands(comp)) return false;  // may rehash the map
      *instruction_ids_.TryEmplace(instr.name, name_hash, kNoId).first =
          static_cast<InstrId>(module_->instructions.size());
    }

    // Stored now; the attributes fill it in place.
    Instruction& stored = module_->instructions.emplace_back(instr);
    stored.index = parameter_number;
    stored.operands_begin = operands_begin;
    stored.operand_count = operand_count;
    stored.attributes_begin = static_cast<uint32_t>(module_->attribute_pool.size());
    extras.callees_begin = static_cast<uint32_t>(module_->callee_pool.size());
    extras.control_predecessors_begin =
        static_cast<uint32_t>(module_->control_predecessor_pool.size());
    extras.output_operand_aliases_begin =
        static_cast<uint32_t>(module_->output_operand_alias_pool.size());
    stored.dimensions_begin = static_cast<uint32_t>(module_->dimension_pool.size());
    while (Consume(',')) {
      if (!ParseAttribute(&stored, &extras)) return false;
    }
    stored.attribute_count =
        static_cast<uint32_t>(module_->attribute_pool.size()) - stored.attributes_begin;
    extras.callee_count =
        static_cast<uint32_t>(module_->callee_pool.size()) - extras.callees_begin;
    extras.control_predecessor_count =
        static_cast<uint32_t>(module_->control_predecessor_pool.size()) -
        extras.control_predecessors_begin;
    extras.output_operand_alias_count =
        static_cast<uint32_t>(module_->output_operand_alias_pool.size()) -
        extras.output_operand_aliases_begin;
    stored.dimension_count =
        static_cast<uint32_t>(module_->dimension_pool.size()) - stored.dimensions_begin;
    module_->SetExtras(&stored, extras);
    previous_name_ = instr.name;
    previous_id_ = static_cast<InstrId>(module_->instructions.size() - 1);
    if (prefault_) {
      PrefaultAhead(module_->instructions, &prefaulted_[0]);
      PrefaultAhead(module_->attribute_pool, &prefaulted_[1]);
      PrefaultAhead(module_->operand_pool, &prefaulted_[2]);
    }
    return true;
  }

  // Instruction names past the first kDeferNamesAfter of a computation go
  // to deferred_names_, and into the map only at the end of the body, all
  // at once: sized once rather than doubled step by step, and with each
  // slot loaded a few names ahead. Inserted one by one as parsed, in a
  // map too large for the cache, each would wait on a miss. Operands that
  // name them then wait for the end of the body too, as forward
  // references do. A duplicate name is then found at the end of the body,
  // or when the body fails to parse (ReportDeferredDuplicate), and is
  // reported at the same place with the same message.
  static constexpr size_t kDeferNamesAfter = 1024;
  // The last deferred names, by hash (a direct-mapped cache that stays in
  // L1): operands usually name recent instructions, whose slots in the
  // map would otherwise be looked up only at the end of the body.
  static constexpr size_t kRecentNames = 256;

  bool DuplicateName(const char* where, absl::string_view name) {
    return Error(where, absl::StrCat("instruction '", name,
                                     "' is already defined in this computation"));
  }

  // Puts the deferred names into the map; false (the error recorded) on a
  // name defined twice.
  bool FlushDeferredNames() {
    if (deferred_names_.empty()) return true;
    instruction_ids_.Reserve(instruction_ids_.size() + deferred_names_.size());
    constexpr size_t kAhead = 8;
    const size_t n = deferred_names_.size();
    for (size_t k = 0; k < std::min(kAhead, n); ++k) {
      instruction_ids_.Prefetch(deferred_names_[k].hash);
    }
    for (size_t k = 0; k < n; ++k) {
      if (k + kAhead < n) instruction_ids_.Prefetch(deferred_names_[k + kAhead].hash);
      const DeferredName& d = deferred_names_[k];
      if (!instruction_ids_.TryEmplace(d.name, d.hash, d.id).second) {
        deferred_names_.clear();
        return DuplicateName(d.where(), d.name);
      }
    }
    deferred_names_.clear();
    return true;
  }

  // After an error inside a body with deferred names: a name defined twice
  // before the error's place is the first error, as when names are claimed
  // as parsed. Returns false.
  // The instruction being parsed counts too when it failed after its name
  // would have been claimed (unclaimed_).
  bool ReportDeferredDuplicate() {
    const DeferredName current = std::exchange(unclaimed_, DeferredName{});
    if (!defer_names_) return false;
    absl::Status later = std::move(error_);
    error_ = absl::OkStatus();
    if (!FlushDeferredNames()) return false;
    if (!current.name.empty() && instruction_ids_.Find(current.name, current.hash) != nullptr) {
      return DuplicateName(current.where(), current.name);
    }
    error_ = std::move(later);
    return false;
  }

  // The opcode written as `text` (kUnknown if none), and whether `text`
  // differs from OpcodeName(opcode). Remembers the spellings seen: a repeat
  // of the last one costs a comparison, any other one lookup.
  struct OpcodeSpelling {
    Opcode opcode;
    bool unusual;
  };
  OpcodeSpelling LookUpOpcode(absl::string_view text) {
    if (text.size() == previous_opcode_text_.size() &&
        SameBytes(text.data(), previous_opcode_text_.data(), text.size())) {
      return previous_opcode_;
    }
    constexpr uint32_t kUnusual = 1u << 16;
    const uint32_t hash = HashView(text);
    OpcodeSpelling spelling;
    if (const uint32_t* known = opcodes_.Find(text, hash)) {
      spelling = {static_cast<Opcode>(*known & 0xff), (*known & kUnusual) != 0};
    } else {
      std::optional<Opcode> opcode = OpcodeFromName(text);
      if (!opcode) opcode = AsyncSugarOpcode(text);
      if (*opcode == Opcode::kUnknown) return {Opcode::kUnknown, true};
      spelling = {*opcode, text != OpcodeName(*opcode)};
      opcodes_.TryEmplace(key_copies_.Copy(text), hash,
                          static_cast<uint32_t>(*opcode) | (spelling.unusual ? kUnusual : 0));
    }
    previous_opcode_text_ = text;
    previous_opcode_ = spelling;
    return spelling;
  }

  // "custom-call-start" and friends: async syntax sugar around an op.
  static Opcode AsyncSugarOpcode(absl::string_view text) {
    struct Suffix {
      absl::string_view suffix;
      Opcode opcode;
    };
    static constexpr Suffix kSuffixes[] = {{"-start", Opcode::kAsyncStart},
                                           {"-update", Opcode::kAsyncUpdate},
                                           {"-done", Opcode::kAsyncDone}};
    for (const Suffix& s : kSuffixes) {
      if (text.size() > s.suffix.size() &&
          text.substr(text.size() - s.suffix.size()) == s.suffix &&
          OpcodeFromName(text.substr(0, text.size() - s.suffix.size()))) {
        return s.opcode;
      }
    }
    return Opcode::kUnknown;
  }

  // operand ::= shape? name       (old printers put the shape first)
  bool ParseOperand() {
    SkipSpace();
    if (p_ + 2 < end_ && p_[0] == '.' && p_[1] == '.' && p_[2] == '.') {
      return Error(p_, "elided operands ('...') cannot be analyzed; "
                       "dump the module without compact operand printing");
    }
    const char* declared_where = p_;
    ShapeId declared = kNoShape;
    if (LooksLikeShape() && !ParseShape(&declared)) return false;
    SkipSpace();
    const char* where = p_;
    absl::string_view name;
    if (!LexName(&name, "an operand name")) return false;
    const uint32_t slot = static_cast<uint32_t>(module_->operand_pool.size());
    module_->operand_pool.push_back(kNoId);
    if (p_ < end_ && *p_ == '#') {
      if (declared != kNoShape) declared_later_.push_back({slot, declared, declared_where});
      // Compact get-tuple-element: "x#1#0" is element {1,0} of x.
      const char* text_start = name.data();
      ShapeIndex index;
      while (p_ < end_ && *p_ == '#') {
        ++p_;
        int64_t k;
        if (!LexInt(&k, "a tuple index after '#'")) return false;
        index.push_back(k);
      }
      const absl::string_view text(text_start, static_cast<size_t>(p_ - text_start));
      compact_operands_.push_back({slot, name, std::move(index), text, where});
      return true;
    }
    // Half the operands name the instruction just above their user: one
    // comparison instead of a hash lookup.
    if (name.size() == previous_name_.size() &&
        SameBytes(name.data(), previous_name_.data(), name.size())) {
      module_->operand_pool[slot] = previous_id_;
      return CheckDeclaredShape(declared, previous_id_, declared_where);
    }
    // Operands are usually defined above their user; others (and a name
    // claimed by the instruction being parsed, and in a large computation
    // names not in the map yet) wait for the body's end.
    const uint32_t hash = HashView(name);
    if (defer_names_) {
      // Most operands name one of the last few instructions.
      const DeferredName& recent = recent_names_[hash % kRecentNames];
      if (recent.hash == hash && recent.name.size() == name.size() && !name.empty() &&
          SameBytes(recent.name.data(), name.data(), name.size())) {
        module_->operand_pool[slot] = recent.id;
        return CheckDeclaredShape(declared, recent.id, declared_where);
      }
    }
    const uint32_t* defined = instruction_ids_.Find(name, hash);
    if (defined != nullptr && *defined != kNoId) {
      module_->operand_pool[slot] = *defined;
      return CheckDeclaredShape(declared, *defined, declared_where);
    }
    pending_operands_.push_back({name, where, slot, hash});
    if (declared != kNoShape) declared_later_.push_back({slot, declared, declared_where});
    return true;
  }

  // Long-form text writes each operand's shape before its name; analysis
  // reads the definition's, so one that disagrees means the figures are
  // for a module other than the one written. kNoShape: none written.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool CheckDeclaredShape(ShapeId declared, InstrId operand,
                                                       const char* where) {
    if (ABSL_PREDICT_TRUE(declared == kNoShape ||
                          declared == module_->instructions[operand].shape)) {
      return true;
    }
    return CheckDeclaredShapeSlow(declared, operand, where);
  }
  ABSL_ATTRIBUTE_NOINLINE bool CheckDeclaredShapeSlow(ShapeId declared, InstrId operand,
                                                      const char* where) {
    const Instruction& definition = module_->instructions[operand];
    if (ShapesAgree(declared, definition.shape)) return true;
    return Error(where, absl::StrCat("operand '", definition.name, "' is declared as ",
                                     module_->shapes.ToString(declared),
                                     ", but its definition has shape ",
                                     module_->shapes.ToString(definition.shape)));
  }

  // Creates the get-tuple-elements that compact operands stand for, just
  // before the instruction using them (once per computation and text).
  bool MaterializeCompactOperands(CompId comp) {
    for (CompactOperand& c : compact_operands_) {
      const uint32_t text_hash = HashView(c.text);
      if (const uint32_t* known = instruction_ids_.Find(c.text, text_hash)) {
        module_->operand_pool[c.slot] = *known;
        continue;
      }
      // kNoId: the name of the instruction being parsed, not defined yet.
      const uint32_t* base = instruction_ids_.Find(c.base, HashView(c.base));
      if (base == nullptr || *base == kNoId) {
        return Error(c.where, absl::StrCat("compact operand '", c.text,
                                           "' refers to an instruction not defined before it"));
      }
      InstrId tuple = *base;
      for (size_t d = 0; d < c.index.size(); ++d) {
        const Shape& shape = module_->shapes.get(module_->instructions[tuple].shape);
        const int64_t k = c.index[d];
        if (!shape.is_tuple() || k < 0 || k >= static_cast<int64_t>(shape.tuple_elements.size())) {
          return Error(c.where, absl::StrCat("compact operand '", c.text,
                                             "' indexes past the end of a tuple"));
        }
        Instruction gte;
        gte.name = d + 1 == c.index.size() ? c.text : c.base;
        gte.opcode = Opcode::kGetTupleElement;
        gte.shape = shape.tuple_elements[static_cast<size_t>(k)];
        gte.parent = comp;
        gte.index = static_cast<int32_t>(k);
        gte.is_implicit = true;
        gte.set_source_offset(static_cast<uint64_t>(c.where - begin_));
        gte.operands_begin = static_cast<uint32_t>(module_->operand_pool.size());
        gte.operand_count = 1;
        module_->operand_pool.push_back(tuple);
        gte.attributes_begin = static_cast<uint32_t>(module_->attribute_pool.size());
        gte.dimensions_begin = static_cast<uint32_t>(module_->dimension_pool.size());
        tuple = static_cast<InstrId>(module_->instructions.size());
        module_->instructions.push_back(gte);
      }
      instruction_ids_.TryEmplace(c.text, text_hash, tuple);
      module_->operand_pool[c.slot] = tuple;
    }
    compact_operands_.clear();
    return true;
  }
  // A shape begins with '(' or with a type name directly followed by '['.
  bool LooksLikeShape() {
    if (p_ < end_ && *p_ == '(') return true;
    const char* q = p_;
    while (q < end_ && absl::ascii_isalnum(static_cast<unsigned char>(*q))) ++q;
    return q < end_ && q != p_ && *q == '[';
  }

  // attribute ::= name '=' value
  bool ParseAttribute(Instruction* instr, InstructionExtras* extras) {
    absl::string_view key, value;
    if (!LexName(&key, "an attribute name")) return false;
    if (!Expect('=')) return false;
    SkipSpace();
    const char* value_start = p_;
    // A second metadata attribute replaces the first's shared text: the
    // first goes back into the list as written.
    if (key == "metadata" && instr->elided_metadata_at != Instruction::kNotElided) {
      RestoreElidedMetadata(instr);
    }
    // metadata={...}, on nearly every instruction, is parsed in one pass;
    // anything unusual takes the general path, which scans the value first.
    if (key == "metadata" && p_ < end_ && *p_ == '{') {
      const uint32_t previous = instr->metadata;
      const size_t metadata_count = module_->metadata.size();
      absl::string_view new_text;
      uint32_t new_hash = 0;
      if (ParseSharedMetadata(instr, &new_text, &new_hash) && p_ < end_ &&
          (*p_ == ',' || *p_ == '\n' || *p_ == '\r')) {
        if (!new_text.empty()) {
          // Owned by the module: elided attributes print it, and the
          // fields, moved into the copy, no longer read the input (which
          // is given back as parsing goes on).
          const absl::string_view text = module_->Own(new_text);
          OpMetadata& shared = module_->metadata[instr->metadata];
          shared.text = text;
          for (absl::string_view* field : {&shared.op_type, &shared.op_name, &shared.source_file}) {
            const char* from = field->data();
            if (field->empty() || from < new_text.data() ||
                from + field->size() > new_text.data() + new_text.size()) {
              continue;
            }
            *field = text.substr(static_cast<size_t>(from - new_text.data()), field->size());
          }
          metadata_ids_.TryEmplace(text, new_hash, instr->metadata);
        }
        const size_t at = module_->attribute_pool.size() - instr->attributes_begin;
        if (at < Instruction::kNotElided) {
          instr->elided_metadata_at = static_cast<uint16_t>(at);
        } else {
          AddAttribute(key, absl::string_view(value_start, static_cast<size_t>(p_ - value_start)));
        }
        return true;
      }
      UndoMetadataParse(instr, previous, metadata_count, value_start);
    }
    if (key == "literal" ? !LexLiteralAttributeValue(&value) : !LexAttributeValue(&value)) {
      return false;
    }
    AddAttribute(key, value);

    auto computation_list = [&](CallRole role) {
      return ParseSubvalue(value_start, value, [&] { return ParseCalleeList(role); });
    };
    switch (key.size() > 0 ? key[0] : '\0') {
      case 'b':
        if (key == "body") return AddCallee(CallRole::kBody, value, value_start);
        if (key == "branch_computations") return computation_list(CallRole::kBranch);
        break;
      case 'c':
        if (key == "calls") return computation_list(CallRole::kCalls);
        if (key == "condition") return AddCallee(CallRole::kCondition, value, value_start);
        if (key == "called_computations") {
          return computation_list(CallRole::kCalledComputations);
        }
        if (key == "custom_call_target") {
          absl::string_view target = value;
          if (target.size() >= 2 && target.front() == '"' && target.back() == '"') {
            target = target.substr(1, target.size() - 2);
          }
          // A copy: the backend is guessed from every custom call's target
          // after the parse, and reading them from the input brought a
          // released module's whole text back into memory.
          extras->custom_call_target = module_->Own(target);
          return true;
        }
        if (key == "control-predecessors") {
          return ParseSubvalue(value_start, value, [&] { return ParsePredecessors(); });
        }
        break;
      case 'd':
        if (key == "dimensions") {
          return ParseSubvalue(value_start, value, [&] { return ParseDimensions(); });
        }
        break;
      case 'f':
        if (key == "false_computation") return AddCallee(CallRole::kBranch, value, value_start);
        break;
      case 'i':
        if (key == "index") {
          // Only a get-tuple-element's is kept: the field is a parameter's
          // number otherwise.
          int32_t unused = 0;
          int32_t* index =
              instr->opcode == Opcode::kGetTupleElement ? &instr->index : &unused;
          return ParseSubvalue(value_start, value,
                               [&] { return LexInt32(index, "a tuple index"); });
        }
        break;
      case 'k':
        if (key == "kind") {
          instr->fusion_kind = value == "kLoop"     ? FusionKind::kLoop
                               : value == "kInput"  ? FusionKind::kInput
                               : value == "kOutput" ? FusionKind::kOutput
                               : value == "kCustom" ? FusionKind::kCustom
                                                    : FusionKind::kOther;
          return true;
        }
        break;
      case 'm':
        if (key == "metadata") {
          return ParseSubvalue(value_start, value, [&] { return ParseMetadata(instr); });
        }
        break;
      case 'o':
        if (key == "output_to_operand_aliasing") {
          return ParseSubvalue(value_start, value, [&] { return ParseOutputOperandAliasing(); });
        }
        break;
      case 's':
        if (key == "select") return AddCallee(CallRole::kSelect, value, value_start);
        if (key == "scatter") return AddCallee(CallRole::kScatter, value, value_start);
        break;
      case 't':
        if (key == "to_apply") return AddCallee(CallRole::kToApply, value, value_start);
        if (key == "true_computation") return AddCallee(CallRole::kBranch, value, value_start);
        break;
      default:
        break;
    }
    return true;
  }

  // Puts an instruction's elided metadata attribute back into its place in
  // the attribute list (the instruction's attributes end the pool).
  void RestoreElidedMetadata(Instruction* instr) {
    const auto at = module_->attribute_pool.begin() + instr->attributes_begin +
                    instr->elided_metadata_at;
    module_->attribute_pool.insert(at, Attribute{"metadata", module_->metadata[instr->metadata].text});
    instr->elided_metadata_at = Instruction::kNotElided;
  }

  // Built in place: a temporary, copied with wide loads right after its
  // fields were stored, would stall on store forwarding.
  void AddAttribute(absl::string_view key, absl::string_view value) {
    Attribute& attribute = module_->attribute_pool.emplace_back();
    attribute.key = key;
    attribute.value = value;
  }

  bool AddCallee(CallRole role, absl::string_view name, const char* where) {
    if (!name.empty() && name.front() == '%') name.remove_prefix(1);
    if (name.empty() || !IsNameStart(name.front())) {
      return Error(where, "expected a computation name");
    }
    // Callees usually come first in the text; only forward references wait
    // for the end of the module (and its text to be read back then).
    if (const uint32_t* defined = computation_ids_.Find(name, HashView(name))) {
      module_->callee_pool.push_back({role, *defined});
      return true;
    }
    pending_callees_.push_back(
        {static_cast<uint32_t>(module_->callee_pool.size()), name, where});
    module_->callee_pool.push_back({role, kNoId});
    return true;
  }

  // name | '{' (name (',' name)*)? '}'
  bool ParseCalleeList(CallRole role) {
    const auto callee = [&] {
      SkipSpace();
      const char* where = p_;
      absl::string_view name;
      return LexName(&name, "a computation name") && AddCallee(role, name, where);
    };
    if (!Consume('{')) return callee();
    return ParseListAfterBrace(callee);
  }

  // (item (',' item)*)? '}', the opening '{' already consumed.
  template <typename Fn>
  bool ParseListAfterBrace(Fn&& item) {
    if (Consume('}')) return true;
    do {
      if (!item()) return false;
    } while (Consume(','));
    return Expect('}');
  }

  bool ParsePredecessors() {
    if (!Expect('{')) return false;
    return ParseListAfterBrace([&] {
      SkipSpace();
      const char* where = p_;
      absl::string_view name;
      if (!LexName(&name, "an instruction name")) return false;
      pending_predecessors_.push_back(
          {name, where, static_cast<uint32_t>(module_->control_predecessor_pool.size()),
           HashView(name)});
      module_->control_predecessor_pool.push_back(kNoId);
      return true;
    });
  }

  bool ParseDimensions() {
    if (!Expect('{')) return false;
    return ParseListAfterBrace([&] {
      int64_t d;
      if (!LexInt(&d, "a dimension number")) return false;
      module_->dimension_pool.push_back(d);
      return true;
    });
  }

  // '{' (shape_index ':' '(' int ',' shape_index ')' ','?)* '}'
  bool ParseOutputOperandAliasing() {
    if (!Expect('{')) return false;
    while (!Consume('}')) {
      OutputOperandAlias alias;
      if (!ParseShapeIndex(&alias.output_index) || !Expect(':') || !Expect('(') ||
          !LexInt(&alias.operand, "an operand number") || !Expect(',') ||
          !ParseShapeIndex(&alias.operand_index) || !Expect(')')) {
        return false;
      }
      module_->output_operand_alias_pool.push_back(std::move(alias));
      Consume(',');
    }
    return true;
  }

  // Dumps repeat a few thousand metadata texts over millions of
  // instructions: a text parsed before is looked up rather than parsed and
  // stored again (parsing the same bytes gives the same result). Sets
  // `*new_text` to a text parsed here for the first time, which the caller
  // shares once the attribute is accepted, and `*new_hash` to its HashView.
  bool ParseSharedMetadata(Instruction* instr, absl::string_view* new_text, uint32_t* new_hash) {
    if (MetadataToLineEnd(instr, new_text, new_hash)) return true;
    const char* start = p_;
    if (!SkipBalanced()) {
      error_ = absl::OkStatus();
      p_ = start;
      return ParseMetadata(instr);
    }
    const absl::string_view text(start, static_cast<size_t>(p_ - start));
    const uint32_t hash = HashView(text);
    if (const uint32_t* known = metadata_ids_.Find(text, hash)) {
      instr->metadata = *known;
      return true;
    }
    p_ = start;
    if (!ParseMetadata(instr)) return false;
    if (p_ == start + text.size()) {
      *new_text = text;
      *new_hash = hash;
    }
    return true;
  }

  // Most dumps end their lines with the metadata: the text from the cursor
  // to the line's end, found by memchr, is then the metadata text as a
  // whole, looked up (the same bytes have the same bracketed extent) or
  // parsed with no scan of its brackets first. Tried until it has missed
  // far more often than it hit, and only on lines short enough that a miss
  // costs little.
  bool MetadataToLineEnd(Instruction* instr, absl::string_view* new_text, uint32_t* new_hash) {
    constexpr size_t kLongestTried = 4096;
    if (metadata_line_misses_ > metadata_line_hits_ + 64) return false;
    const void* nl = std::memchr(p_, '\n', std::min(kLongestTried, static_cast<size_t>(end_ - p_)));
    if (nl != nullptr) {
      const absl::string_view text(p_, static_cast<size_t>(static_cast<const char*>(nl) - p_));
      if (!text.empty() && text.back() == '}') {
        const uint32_t hash = HashView(text);
        if (const uint32_t* known = metadata_ids_.Find(text, hash)) {
          instr->metadata = *known;
          p_ += text.size();
          ++metadata_line_hits_;
          return true;
        }
        if (ParseMetadataSpanning(instr, text)) {
          *new_text = text;
          *new_hash = hash;
          ++metadata_line_hits_;
          return true;
        }
      }
    }
    ++metadata_line_misses_;
    return false;
  }

  // Parses the metadata value `text`, at the cursor, when the parse ends
  // exactly at its end where the scan of its brackets would (no comment
  // skipped, too short to nest too deep); otherwise changes nothing.
  bool ParseMetadataSpanning(Instruction* instr, absl::string_view text) {
    if (text.size() > static_cast<size_t>(std::max(options_.max_nesting_depth, 0))) return false;
    const uint32_t previous = instr->metadata;
    const size_t metadata_count = module_->metadata.size();
    const uint64_t comments = comments_skipped_;
    if (ParseMetadata(instr) && p_ == text.data() + text.size() && comments_skipped_ == comments) {
      return true;
    }
    UndoMetadataParse(instr, previous, metadata_count, text.data());
    return false;
  }

  // Takes back a metadata parse that was not accepted: its error, its entry
  // and the cursor.
  void UndoMetadataParse(Instruction* instr, uint32_t previous, size_t metadata_count,
                         const char* at) {
    error_ = absl::OkStatus();
    module_->metadata.resize(metadata_count);
    instr->metadata = previous;
    p_ = at;
  }

  // absl::SimpleAtoi, without its call and generality for the usual short
  // run of digits.
  static bool ParseMetadataNumber(absl::string_view token, int64_t* out) {
    constexpr size_t kMostDigitsWithoutOverflow = 18;
    if (token.empty() || token.size() > kMostDigitsWithoutOverflow) {
      return absl::SimpleAtoi(token, out);
    }
    int64_t value = 0;
    for (const char c : token) {
      if (!IsDigit(c)) return absl::SimpleAtoi(token, out);
      value = value * 10 + (c - '0');
    }
    *out = value;
    return true;
  }

  // metadata ::= '{' (key '=' (string | int | '{' ... '}'))* '}'
  bool ParseMetadata(Instruction* instr) {
    if (!Expect('{')) return false;
    OpMetadata metadata;
    while (!Consume('}')) {
      absl::string_view key;
      if (!LexName(&key, "a metadata field")) return false;
      if (!Expect('=')) return false;
      SkipSpace();
      if (p_ < end_ && *p_ == '"') {
        absl::string_view s;
        if (!LexString(&s)) return false;
        if (key == "op_type") metadata.op_type = s;
        else if (key == "op_name") metadata.op_name = s;
        else if (key == "source_file") metadata.source_file = s;
      } else if (p_ < end_ && (*p_ == '{' || *p_ == '(' || *p_ == '[')) {
        if (!SkipBalanced()) return false;
      } else {
        absl::string_view token;
        if (!LexAttributeValue(&token)) return false;
        int64_t* field = key == "stack_frame_id" ? &metadata.stack_frame_id
                         : key == "source_line"  ? &metadata.source_line
                                                 : nullptr;
        int64_t number = 0;
        if (field != nullptr && ParseMetadataNumber(token, &number)) *field = number;
      }
      Consume(',');
    }
    instr->metadata = static_cast<uint32_t>(module_->metadata.size());
    module_->metadata.push_back(metadata);
    return true;
  }

  std::shared_ptr<const FileContents> file_;
  size_t released_ = 0;  // ReleaseParsedText gave back data()[0, released_)
  int parts_ = 1;  // the parts the module's body was parsed in
  ParseOptions options_;
  const char* begin_;
  const char* p_;
  const char* end_;
  absl::Status error_;

  Module* module_ = nullptr;
  ViewMap shape_cache_;  // shape text -> ShapeId
  ViewMap computation_ids_;
  ViewMap instruction_ids_;  // of the computation being parsed
  ViewMap opcodes_;  // opcode text -> Opcode
  bool prefault_ = false;  // set for big modules, whose pools were reserved
  uintptr_t prefaulted_[3] = {};  // PrefaultAhead's progress per pool
  ViewMap metadata_ids_;  // metadata text -> index into Module::metadata
  // Copies of the keys of shape_cache_ and opcodes_: these maps live as
  // long as the module, and keys viewing the input would be compared far
  // behind the parser, cold in cache or given back by
  // FileContents::ReleasePages and faulted in again.
  TextArena key_copies_;
  uint64_t metadata_line_hits_ = 0;  // MetadataToLineEnd's record
  uint64_t metadata_line_misses_ = 0;
  uint64_t comments_skipped_ = 0;  // by SkipSpaceSlow, for ParseMetadataSpanning
  absl::string_view previous_shape_text_;  // of the last ParseShape; empty: none
  ShapeId previous_shape_ = 0;
  absl::string_view previous_opcode_text_;  // of the last LookUpOpcode that found one
  OpcodeSpelling previous_opcode_ = {Opcode::kUnknown, true};
  absl::string_view previous_name_;  // of the computation's last instruction
  InstrId previous_id_ = kNoId;
  bool defer_names_ = false;  // see kDeferNamesAfter
  std::vector<DeferredName> deferred_names_;
  DeferredName recent_names_[kRecentNames] = {};
  DeferredName unclaimed_ = {};  // the name of the instruction being parsed, deferred
  std::vector<PendingName> pending_operands_;
  std::vector<DeclaredOperand> declared_later_;
  std::vector<PendingName> pending_predecessors_;
  // The computation's signature: its parameters' shapes by number, and its
  // result's (kNoShape: none written).
  std::vector<absl::string_view> signature_parameters_;
  ShapeId signature_result_ = kNoShape;
  // ShapesAgree's memory, by hash of the pair; 0 (a pair of equal ids,
  // never stored) when empty. Ids are the module's: cleared with them.
  static constexpr int kAgreeingPairBits = 8;
  uint64_t agreeing_pairs_[1 << kAgreeingPairBits] = {};
  const char* shape_where_ = nullptr;  // the shape of the last instruction parsed
  std::vector<PendingCallee> pending_callees_;
  std::vector<CompactOperand> compact_operands_;
  // A part cut inside bodies: it starts inside one (continued_, the
  // instructions up to that body's end) and ends inside one (open_).
  bool starts_in_body_ = false;
  bool ends_in_body_ = false;
  std::optional<BodySegment> continued_;
  std::optional<BodySegment> open_;
};

}  // namespace

absl::StatusOr<std::vector<Module>> ParseHloText(
    std::shared_ptr<const FileContents> file, const ParseOptions& options) {
  // Instructions keep their byte offsets in 40 bits.
  if (file->data().size() > Instruction::kMaxSourceOffset) {
    return absl::ResourceExhaustedError(
        absl::StrCat(file->path(), ": error: the text is ", file->data().size(),
                     " bytes; hlomem reads HLO text of at most 2^40 bytes"));
  }
  TextParser parser(std::move(file), options);
  return parser.Run();
}

absl::StatusOr<std::vector<Module>> ParseHloString(absl::string_view text,
                                                   absl::string_view path,
                                                   const ParseOptions& options) {
  return ParseHloText(FileContents::FromString(std::string(path), std::string(text)),
                      options);
}

}  // namespace hlomem::hlo
