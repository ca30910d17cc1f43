// The HTML report is one self-contained file, and it draws: Chromium
// (headless) renders it to a PNG, and the screenshot must show the chart's
// area (its fill colour) and the red peak marker. Skips, saying so, when
// Chromium is not installed (tools/setup.sh installs it with
// HLOMEM_WITH_BROWSER=1, as .ci/run does).
#include <sys/wait.h>
#include <zlib.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/base/atomic_file.h"
#include "lib/report/diff.h"
#include "lib/report/writers.h"
#include "tests/report/report_test_util.h"

namespace hlomem::report {
namespace {

using ::hlomem::report::testing::BuildCase;
using ::hlomem::report::testing::ReadFileOrDie;
using ::hlomem::report::testing::TempPath;
using ::testing::HasSubstr;
using ::testing::Not;

struct Image {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // 3 bytes per pixel, rows top to bottom
  bool ok() const { return width > 0; }
};

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

int Paeth(int a, int b, int c) {
  const int p = a + b - c;
  const int pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

// Decodes 8-bit RGB or RGBA non-interlaced PNGs (what Chromium writes).
Image DecodePng(const std::string& file) {
  Image image;
  const auto* data = reinterpret_cast<const uint8_t*>(file.data());
  if (file.size() < 8 || file.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return image;
  std::vector<uint8_t> compressed;
  int channels = 0;
  for (size_t at = 8; at + 8 <= file.size();) {
    const uint32_t length = BigEndian32(data + at);
    const std::string type = file.substr(at + 4, 4);
    const uint8_t* body = data + at + 8;
    if (at + 12 + length > file.size()) return image;
    if (type == "IHDR") {
      image.width = static_cast<int>(BigEndian32(body));
      image.height = static_cast<int>(BigEndian32(body + 4));
      if (body[8] != 8 || body[12] != 0) return Image();  // 8-bit, not interlaced
      channels = body[9] == 2 ? 3 : body[9] == 6 ? 4 : 0;
      if (channels == 0) return Image();
    } else if (type == "IDAT") {
      compressed.insert(compressed.end(), body, body + length);
    }
    at += 12 + length;
  }
  const size_t stride = static_cast<size_t>(image.width) * channels;
  std::vector<uint8_t> raw((stride + 1) * image.height);
  uLongf raw_size = raw.size();
  if (uncompress(raw.data(), &raw_size, compressed.data(), compressed.size()) != Z_OK ||
      raw_size != raw.size()) {
    return Image();
  }
  std::vector<uint8_t> pixels(stride * image.height);
  for (int y = 0; y < image.height; ++y) {
    const uint8_t filter = raw[y * (stride + 1)];
    const uint8_t* in = &raw[y * (stride + 1) + 1];
    uint8_t* out = &pixels[y * stride];
    const uint8_t* up = y > 0 ? &pixels[(y - 1) * stride] : nullptr;
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= static_cast<size_t>(channels) ? out[x - channels] : 0;
      const int b = up ? up[x] : 0;
      const int c = up && x >= static_cast<size_t>(channels) ? up[x - channels] : 0;
      int v = in[x];
      switch (filter) {
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += Paeth(a, b, c); break;
      }
      out[x] = static_cast<uint8_t>(v);
    }
  }
  image.rgb.reserve(static_cast<size_t>(image.width) * image.height * 3);
  for (size_t k = 0; k < pixels.size(); k += channels) {
    image.rgb.insert(image.rgb.end(), &pixels[k], &pixels[k] + 3);
  }
  return image;
}

int CountNear(const Image& image, int r, int g, int b, int tolerance) {
  int count = 0;
  for (size_t k = 0; k + 2 < image.rgb.size(); k += 3) {
    if (std::abs(image.rgb[k] - r) <= tolerance && std::abs(image.rgb[k + 1] - g) <= tolerance &&
        std::abs(image.rgb[k + 2] - b) <= tolerance) {
      ++count;
    }
  }
  return count;
}

std::string FindChromium() {
  for (const char* name : {"chromium", "chromium-browser", "google-chrome", "chrome"}) {
    const std::string command = std::string("command -v ") + name + " > /dev/null 2>&1";
    if (std::system(command.c_str()) == 0) return name;
  }
  return "";
}

// Renders `html` in headless Chromium; returns the PNG's bytes or "".
std::string Screenshot(const std::string& html, const std::string& name) {
  const std::string chromium = FindChromium();
  if (chromium.empty()) return "";
  const std::string page = TempPath(name + ".html");
  const std::string png = TempPath(name + ".png");
  const std::string log = TempPath(name + ".chromium.log");
  EXPECT_TRUE(WriteFileAtomically(page, html).ok());
  std::remove(png.c_str());
  // No network: Chromium gets a proxy that does not exist, so a page that
  // tried to fetch anything would show broken content, not pass by luck.
  const std::string command = chromium +
                              " --headless --no-sandbox --disable-gpu --hide-scrollbars"
                              " --proxy-server=127.0.0.1:9 --window-size=1280,1000"
                              " --user-data-dir=" + TempPath(name + ".profile") +
                              " --virtual-time-budget=2000 --screenshot=" + png + " file://" + page +
                              " > " + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::system(("rm -rf " + TempPath(name + ".profile")).c_str());
  EXPECT_EQ(status, 0) << command << "\n" << ReadFileOrDie(log);
  std::ifstream in(png, std::ios::binary);
  if (!in) return "";
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The chart's fill #3b76d9 and the peak marker #d62728 (html_writer.cc).
void ExpectChart(const Image& image) {
  ASSERT_TRUE(image.ok());
  const int area = CountNear(image, 0x3b, 0x76, 0xd9, 12);
  const int peak = CountNear(image, 0xd6, 0x27, 0x28, 12);
  EXPECT_GT(area, 20000) << "the live-bytes area is not drawn";
  EXPECT_GT(peak, 150) << "the peak marker is not drawn";
}

TEST(HtmlTest, IsOneSelfContainedFile) {
  Report report = BuildCase("seed_gather_grad_int32_grads");
  ASSERT_FALSE(report.modules[0].rows.empty());
  report.modules[0].rows[0].op_name = "x</script><script>alert(1)</script>y";
  const std::string html = WriteHtml(report, WriteOptions());
  EXPECT_THAT(html, HasSubstr("createElementNS"));  // the chart is drawn by inline JS
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr(" src=")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  // The data block cannot be closed early by a name containing "</script>".
  EXPECT_EQ(html.find("</script>"), html.find("</script>\n<script>"));
  EXPECT_THAT(html, Not(HasSubstr("x</script>")));
  EXPECT_THAT(html, HasSubstr("tools/programs/seed.py:15"));
  EXPECT_THAT(html, HasSubstr("duplicate-buffer"));
}

TEST(HtmlTest, ChromiumScreenshotShowsTheChart) {
  if (FindChromium().empty()) {
    GTEST_SKIP() << "SKIPPED: chromium is not installed (HLOMEM_WITH_BROWSER=1 tools/setup.sh installs it)";
  }
  const Report report = BuildCase("seed_gather_grad_int32_grads");
  const std::string png = Screenshot(WriteHtml(report, WriteOptions()), "report");
  ASSERT_FALSE(png.empty()) << "no screenshot written";
  ExpectChart(DecodePng(png));
}

TEST(HtmlTest, ChromiumScreenshotOfTheDiffShowsBothSides) {
  if (FindChromium().empty()) {
    GTEST_SKIP() << "SKIPPED: chromium is not installed (HLOMEM_WITH_BROWSER=1 tools/setup.sh installs it)";
  }
  const Report a = BuildCase("seed_gather_grad_int32_nograds");
  const Report b = BuildCase("seed_gather_grad_int32_grads");
  const std::string png = Screenshot(WriteDiffHtml(DiffReports(a, b), WriteOptions()), "diff");
  ASSERT_FALSE(png.empty());
  const Image image = DecodePng(png);
  ASSERT_TRUE(image.ok());
  EXPECT_GT(CountNear(image, 0xb9, 0xbf, 0xcc, 10), 5000) << "side A's area is not drawn";
  EXPECT_GT(CountNear(image, 0x3b, 0x76, 0xd9, 12), 300) << "side B's line is not drawn";
}

TEST(HtmlTest, TimelineByLineStacksTheTopLines) {
  const Report report = BuildCase("transformer_block_train_step");
  const ModuleReport& m = report.modules.at(0);
  const std::vector<LineBand> bands = TimelineByLine(m, 8);
  ASSERT_EQ(bands.size(), 8u);
  const std::vector<RollupRow> lines = RollupAtPeak(m, RollupKey::kSourceLine);
  EXPECT_EQ(bands[0].key, lines[0].key);
  const size_t peak = static_cast<size_t>(m.profile.peak_step);
  for (const LineBand& band : bands) {
    ASSERT_EQ(band.live.size(), m.profile.timeline.size());
    // Every buffer live at the peak is in its line's band there.
    EXPECT_GE(band.live[peak], band.bytes_at_peak) << band.key;
  }
}

TEST(HtmlTest, ChromiumScreenshotStacksTheTimelineBySourceLine) {
  if (FindChromium().empty()) {
    GTEST_SKIP() << "SKIPPED: chromium is not installed (HLOMEM_WITH_BROWSER=1 tools/setup.sh installs it)";
  }
  const Report report = BuildCase("transformer_block_train_step");
  const std::string png = Screenshot(WriteHtml(report, WriteOptions()), "bands");
  ASSERT_FALSE(png.empty());
  const Image image = DecodePng(png);
  ASSERT_TRUE(image.ok());
  // The first three lines' bands: blue, orange, green (html_writer.cc COLORS).
  EXPECT_GT(CountNear(image, 0x3b, 0x76, 0xd9, 12), 5000) << "the top line's band is not drawn";
  EXPECT_GT(CountNear(image, 0xe8, 0xa3, 0x3d, 12), 2000) << "the second line's band is not drawn";
  EXPECT_GT(CountNear(image, 0x4d, 0xaf, 0x7c, 12), 2000) << "the third line's band is not drawn";
}

}  // namespace
}  // namespace hlomem::report
