// One self-contained HTML file (no network, no external scripts or fonts):
// per module the summary, an interactive chart of live bytes over program
// order (SVG drawn by inline JS; hover shows the step, the bytes and the
// largest buffers live there with their source lines), the lifetimes of the
// buffers at the peak, and the findings. The tables are plain HTML, so the
// file still reads without JavaScript. A diff draws both sides on one axis.
#include <algorithm>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "lib/base/bytes.h"
#include "lib/report/writers.h"

namespace hlomem::report {
namespace {

// Points of the chart: more would only slow the browser down.
constexpr size_t kMaxPoints = 4000;
// Buffers sent to the page for hover details: the largest ones.
constexpr size_t kMaxBuffers = 400;

std::string Html(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// A JSON string literal safe inside <script>: "</" cannot close the tag.
std::string JsString(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '<': out += "\\u003c"; break;
      case '>': out += "\\u003e"; break;
      case '&': out += "\\u0026"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&out, absl::StrFormat("\\u%04x", c));
        } else {
          out.push_back(c);
        }
    }
  }
  out += "\"";
  return out;
}

std::string JsNumbers(const std::vector<int64_t>& values) {
  // Doubles in JS: exact below 2^53, which holds any real byte count.
  std::string out = "[";
  for (size_t k = 0; k < values.size(); ++k) absl::StrAppend(&out, k ? "," : "", values[k]);
  return out + "]";
}

// The series of one side: timeline reduced to kMaxPoints (bucket maxima).
std::string SeriesJs(const ModuleReport& m, absl::string_view label) {
  const std::vector<int64_t>& t = m.profile.timeline;
  return absl::StrCat("{\"label\":", JsString(label), ",\"steps\":", t.size(),
                      ",\"points\":", JsNumbers(DownsampleMax(t, kMaxPoints)),
                      ",\"peak_step\":", m.profile.peak_step,
                      ",\"peak\":", m.profile.peak_live_bytes, "}");
}

// The timeline stacked by source line: the top lines' bytes at the same
// sampled steps as the series, so the bands stack up to it.
std::string BandsJs(const ModuleReport& m) {
  constexpr size_t kBands = 8;
  const std::vector<size_t> steps = DownsampleArgMax(m.profile.timeline, kMaxPoints);
  std::string out = "[";
  bool first = true;
  for (const LineBand& band : TimelineByLine(m, kBands)) {
    std::vector<int64_t> points;
    points.reserve(steps.size());
    for (size_t s : steps) points.push_back(band.live[s]);
    absl::StrAppend(&out, first ? "" : ",", "{\"key\":", JsString(band.key),
                    ",\"at_peak\":", band.bytes_at_peak, ",\"points\":", JsNumbers(points), "}");
    first = false;
  }
  return out + "]";
}

// A buffer's Python stack, innermost first, as [["file:line function",
// is_library], ...]; the first kMaxFrames frames.
std::string StackJs(const ModuleReport& m, int64_t stack_frame) {
  constexpr size_t kMaxFrames = 16;
  std::string out = "[";
  size_t n = 0;
  for (const StackFrameRow* f : StackOf(m, stack_frame)) {
    if (n++ == kMaxFrames) break;
    absl::StrAppend(&out, n > 1 ? "," : "", "[",
                    JsString(absl::StrCat(f->file, ":", f->line, " ", f->function)), ",",
                    f->library ? "1" : "0", "]");
  }
  return out + "]";
}

// The largest buffers plus every buffer live at the peak (up to kMaxBuffers).
std::string BuffersJs(const ModuleReport& m) {
  const std::vector<bool> at_peak = AtPeakMask(m);
  // At the peak first, then largest first, ties in row order: only the
  // first kMaxBuffers are sorted, on keys side by side (sorting a million
  // rows' indices through the rows was half of the HTML writer's time).
  std::vector<std::tuple<bool, int64_t, size_t>> order(m.rows.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = {!at_peak[k], -m.rows[k].bytes, k};
  const size_t shown = std::min(order.size(), kMaxBuffers);
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(shown), order.end());
  order.resize(shown);
  std::string out = "[";
  bool first = true;
  for (const auto& [not_at_peak, minus_bytes, k] : order) {
    const BufferRow& r = m.rows[k];
    absl::StrAppend(&out, first ? "" : ",", "{\"label\":", JsString(r.Label()),
                    ",\"instruction\":", JsString(r.instruction),
                    ",\"shape\":", JsString(StripLayout(r.shape)), ",\"kind\":", JsString(r.kind),
                    ",\"bytes\":", r.bytes, ",\"start\":", r.start, ",\"end\":", r.end,
                    ",\"source\":", JsString(r.Source()), ",\"at_peak\":", at_peak[k] ? "true" : "false",
                    ",\"stack\":", StackJs(m, r.stack_frame), "}");
    first = false;
  }
  return out + "]";
}

void AppendFindings(const std::vector<detect::Finding>& findings, absl::string_view title,
                    std::string* out) {
  absl::StrAppend(out, "<h3>", Html(title), " (", findings.size(), ")</h3>\n");
  if (findings.empty()) {
    absl::StrAppend(out, "<p class=dim>none</p>\n");
    return;
  }
  absl::StrAppend(out, "<ol class=findings>\n");
  for (const detect::Finding& f : findings) {
    absl::StrAppend(out, "<li><span class=\"tag ", Html(detect::SeverityName(f.severity)), "\">",
                    Html(f.detector), "</span> <b>", Html(f.summary.empty() ? HumanBytes(f.bytes) : f.summary), "</b>");
    if (!f.source_file.empty()) {
      absl::StrAppend(out, " at <code>", Html(f.source_file), ":", f.source_line, "</code>");
    }
    absl::StrAppend(out, "<br>", Html(f.message));
    if (!f.suggestion.empty()) absl::StrAppend(out, "<br><i>fix:</i> ", Html(f.suggestion));
    absl::StrAppend(out, "</li>\n");
  }
  absl::StrAppend(out, "</ol>\n");
}

void AppendSummaryTable(const ModuleReport& m, std::string* out) {
  const bool has_xla = m.xla.has_value();
  absl::StrAppend(out, "<table class=summary><tr><th></th><th>hlomem</th><th>bytes</th>",
                  has_xla ? "<th>XLA</th><th></th>" : "", "</tr>\n");
  for (Metric metric : kMetrics) {
    const int64_t value = MetricValue(*m.computed, metric);
    absl::StrAppend(out, "<tr><td>", MetricName(metric), "</td><td class=num>", HumanBytes(value),
                    "</td><td class=num>", value, "</td>");
    if (has_xla && metric != Metric::kPeakLive) {
      const int64_t xla = MetricValue(*m.xla, metric);
      absl::StrAppend(out, "<td class=num>", HumanBytes(xla), "</td><td>",
                      xla == value ? "matches" : "<b class=bad>mismatch</b>", "</td>");
    } else if (has_xla) {
      absl::StrAppend(out, "<td></td><td>step ", m.profile.peak_step, " of ", m.schedule_length, "</td>");
    }
    absl::StrAppend(out, "</tr>\n");
  }
  absl::StrAppend(out, "</table>\n");
  if (HasSeveralMemorySpaces(m)) {
    absl::StrAppend(out, "<h3>Memory spaces</h3>\n<table class=summary><tr><th>space</th>"
                         "<th>color</th><th>hlomem</th><th>XLA</th><th></th></tr>\n");
    for (const MemorySpaceTotals& space : m.memory_spaces) {
      absl::StrAppend(out, "<tr><td>", Html(space.name), " (", MemorySpaceRole(space), ")</td><td class=num>",
                      space.color, "</td><td class=num>",
                      space.computed_bytes ? HumanBytes(*space.computed_bytes) : "",
                      "</td><td class=num>", space.xla_bytes ? HumanBytes(*space.xla_bytes) : "",
                      "</td><td>", Html(MemorySpaceVerdict(space)), "</td></tr>\n");
    }
    absl::StrAppend(out, "</table>\n");
  }
  if (m.oom) {
    absl::StrAppend(out, "<h3 class=bad>Out of memory: ", Html(OomTitle(*m.oom)), "</h3>\n<p><code>",
                    Html(m.oom->error.message), "</code></p>\n<ul>");
    for (const std::string& line : OomLines(*m.oom)) absl::StrAppend(out, "<li>", Html(line), "</li>");
    absl::StrAppend(out, "</ul>\n");
  }
  if (m.device_fit) {
    const DeviceFit& fit = *m.device_fit;
    absl::StrAppend(out, "<p class=", fit.fits ? "good" : "bad", ">",
                    fit.fits ? "Fits" : absl::StrCat("Does not fit by ", HumanBytes(fit.shortfall)),
                    " on ", Html(DeviceFitName(fit)), ": ", Html(DeviceFitBudget(fit)), "</p>\n");
    const std::string source = DeviceFitSource(fit);
    if (!source.empty()) absl::StrAppend(out, "<p>device memory: ", Html(source), "</p>\n");
    if (!fit.caveat.empty()) absl::StrAppend(out, "<p class=caveat>", Html(fit.caveat), "</p>\n");
  }
}

void AppendPeakTable(const ModuleReport& m, const WriteOptions& options, std::string* out) {
  absl::StrAppend(out, "<h3>Buffers live at the peak (step ", m.profile.peak_step, "): ",
                  LiveAtPeakCount(m), " buffers, ", HumanBytes(m.profile.peak_live_bytes),
                  "</h3>\n",
                  m.peak_instruction
                      ? absl::StrCat("<p>while <code>", Html(m.peak_instruction->Describe()),
                                     "</code> runs</p>\n")
                      : "",
                  "<table class=buffers><tr><th>bytes</th><th>% peak</th><th>kind</th>"
                  "<th>shape</th><th>op_name</th><th>source</th><th>live</th></tr>\n");
  const std::vector<PeakGroup> groups = GroupedAtPeak(m, options.top);
  for (const PeakGroup& g : groups) {
    const BufferRow& r = *g.row;
    absl::StrAppend(out, "<tr><td class=num>", HumanBytes(g.bytes()), "</td><td class=num>",
                    PercentOf(g.bytes(), m.profile.peak_live_bytes), "</td><td><span class=\"kind ",
                    Html(r.kind), "\">", Html(r.kind), "</span></td><td>",
                    g.count > 1 ? absl::StrCat(g.count, " &times; ") : "", "<code>",
                    Html(StripLayout(r.shape)), "</code></td><td><code>", Html(r.Label()),
                    "</code></td><td><code>", Html(r.Source()), "</code></td><td class=num>", r.start,
                    "&ndash;", r.end, "</td></tr>\n");
  }
  absl::StrAppend(out, "</table>\n");
  if (LiveAtPeakCount(m) > RowsIn(groups)) {
    absl::StrAppend(out, "<p class=dim>", LiveAtPeakCount(m) - RowsIn(groups),
                    " more; ", TopHint(options), " shows more</p>\n");
  }
}

constexpr char kStyle[] = R"css(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:24px;color:#1d2330;background:#fff}
h1{font-size:20px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 4px;border-top:1px solid #dde;padding-top:14px}
h3{font-size:15px;margin:18px 0 6px}.dim{color:#778}.bad{color:#c0262d}.good{color:#1d7a35}.caveat{color:#8a5a00}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace}
table{border-collapse:collapse;margin:4px 0}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eef}
th{font-weight:600;color:#556}.num{text-align:right;font-variant-numeric:tabular-nums}
.chart{width:100%;max-width:1180px;display:block;user-select:none}
.chart .area{fill:#3b76d9;stroke:#1f4fa3;stroke-width:1}.chart .areaA{fill:#b9bfcc;stroke:#7d8597;stroke-width:1}
.chart .lineB{fill:none;stroke:#3b76d9;stroke-width:2}
.chart .band{cursor:pointer;opacity:.95}.chart .band:hover{opacity:.75}.chart .outline{fill:none;stroke:#1f4fa3;stroke-width:1}
.legend{font-size:12px;margin:4px 0 0 78px}.legend .key{display:inline-block;margin:0 14px 4px 0;cursor:pointer}
.legend .key i{display:inline-block;width:10px;height:10px;margin-right:5px;vertical-align:-1px}
.bandlist{font-size:12px;margin:6px 0 0 78px}
.chart .axis{stroke:#99a;stroke-width:1}.chart text{font-size:11px;fill:#556}
.chart .grid{stroke:#eef;stroke-width:1}.chart .peak{stroke:#d62728;stroke-width:2}.chart .peakdot{fill:#d62728}
.chart .cursor{stroke:#222;stroke-width:1;stroke-dasharray:3 3}
.chart .bar{stroke:#fff;stroke-width:.5}.chart .bar:hover{stroke:#000;stroke-width:1.5}
.kind{padding:0 6px;border-radius:8px;font-size:12px;color:#fff}
.kind.temp,.chart .temp{background:#3b76d9;fill:#3b76d9}.kind.parameter,.chart .parameter{background:#34495e;fill:#34495e}
.kind.output,.chart .output{background:#2a9d8f;fill:#2a9d8f}.kind.constant,.chart .constant{background:#999;fill:#999}
.kind.thread-local,.chart .thread-local{background:#bbb;fill:#bbb}
.tag{padding:0 6px;border-radius:4px;background:#f2c14e;font-size:12px}.tag.error{background:#d62728;color:#fff}
.findings li{margin-bottom:8px}
#tip{position:fixed;pointer-events:none;background:#fff;border:1px solid #aab;border-radius:4px;padding:6px 8px;
 box-shadow:0 2px 8px rgba(0,0,0,.15);font-size:12px;max-width:560px;display:none;z-index:9}
#tip table td{border:0;padding:0 6px 2px 0;vertical-align:top}#tip code{word-break:break-all}
)css";

// Draws, for each <div class=module data-id=N>, the live-bytes chart (one or
// two series) and the lifetimes of the buffers at the peak, from HLOMEM_DATA.
constexpr char kScript[] = R"js(
(function(){
const DATA=JSON.parse(document.getElementById('hlomem-data').textContent);
const NS='http://www.w3.org/2000/svg';
const tip=document.getElementById('tip');
function human(b){const neg=b<0;b=Math.abs(b);if(b<1024)return(neg?'-':'')+b+'B';
 const u='KMGTPE';let i=0;let v=b/1024;while(v>=1024&&i<5){v/=1024;i++;}
 return(neg?'-':'')+(i==0?v.toFixed(1):v.toFixed(2))+u[i]+'iB';}
function el(tag,attrs,parent){const e=document.createElementNS(NS,tag);
 for(const k in attrs)e.setAttribute(k,attrs[k]);if(parent)parent.appendChild(e);return e;}
function esc(s){return String(s).replace(/[&<>"]/g,c=>({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));}
function stk(b){if(!b.stack||!b.stack.length)return'';return '<br>stack:'+b.stack.map(f=>'<br><code'+(f[1]?' class=dim':'')+'>'+esc(f[0])+'</code>').join('');}
function showTip(ev,html){tip.innerHTML=html;tip.style.display='block';
 const x=Math.min(ev.clientX+14,window.innerWidth-tip.offsetWidth-8);
 const y=Math.min(ev.clientY+14,window.innerHeight-tip.offsetHeight-8);
 tip.style.left=x+'px';tip.style.top=y+'px';}
function hideTip(){tip.style.display='none';}
function niceTicks(max,n){if(max<=0)return[0];const raw=max/n;const p=Math.pow(2,Math.floor(Math.log2(raw)));
 const step=raw/p>1.5?p*2:p;const t=[];for(let v=0;v<=max*1.0001;v+=step)t.push(v);return t;}
// The live bytes stacked by source line (the top lines coloured, the rest
// grey), as PyTorch's memory_viz stacks allocations; a band or its legend
// entry lists the line's buffers and their stacks.
const COLORS=['#3b76d9','#e8a33d','#4daf7c','#9467bd','#d45087','#17becf','#bcbd22','#8c564b'];
function drawBands(div,svg,m,s,X,Y){const n=s.points.length;const sx=k=>X(k*s.steps/n);
 const under=new Array(n).fill(0);
 const band=(top,bottom,color,key)=>{let up='',down='';
  for(let k=0;k<n;k++)up+=`${k?'L':'M'}${sx(k)},${Y(top[k])}L${sx(k+1)},${Y(top[k])}`;
  for(let k=n-1;k>=0;k--)down+=`L${sx(k+1)},${Y(bottom[k])}L${sx(k)},${Y(bottom[k])}`;
  const p=el('path',{d:up+down+'Z',fill:color,class:'band'},svg);
  if(key!==null)p.addEventListener('click',()=>listBand(div,m,key));return p;};
 const legend=div.querySelector('.legend');
 // A band spans its buffers' whole live ranges, which can include steps
 // between two uses where the timeline has freed the memory: the stack is
 // clipped to the timeline so it never stands above it.
 m.bands.forEach((b,i)=>{const bottom=under.slice();for(let k=0;k<n;k++)under[k]=Math.min(s.points[k],under[k]+b.points[k]);
  band(under.slice(),bottom,COLORS[i%COLORS.length],b.key);
  const item=document.createElement('span');item.className='key';
  item.innerHTML=`<i style="background:${COLORS[i%COLORS.length]}"></i>${esc(b.key||'(no source line)')} ${human(b.at_peak)}`;
  item.addEventListener('click',()=>listBand(div,m,b.key));legend.appendChild(item);});
 const rest=s.points.map((v,k)=>Math.max(v,under[k]));band(rest,under,'#c7ccd6',null);
 const item=document.createElement('span');item.className='key';item.innerHTML='<i style="background:#c7ccd6"></i>other lines';legend.appendChild(item);}
function listBand(div,m,key){const list=div.querySelector('.bandlist');
 const rows=m.buffers.filter(b=>b.source===key).sort((a,b)=>b.bytes-a.bytes);
 let html=`<b>${esc(key||'(no source line)')}</b>: ${rows.length} of the embedded buffers<table>`;
 for(const b of rows.slice(0,30))html+=`<tr><td class=num>${human(b.bytes)}</td><td>${esc(b.kind)}</td><td><code>${esc(b.label)}</code> <code class=dim>${esc(b.shape)}</code>${stk(b)}</td></tr>`;
 list.innerHTML=html+'</table>';}
function drawModule(div,m){
 const W=1160,H=300,L=78,R=16,T=14,B=34,PW=W-L-R,PH=H-T-B;
 const series=m.series;const steps=Math.max(1,...series.map(s=>s.steps));
 const ymax=Math.max(1,...series.map(s=>Math.max(...s.points,0)))*1.08;
 // Step s spans [X(s), X(s+1)): bytes are live for the whole step.
 const X=s=>L+PW*s/steps,Y=v=>T+PH*(1-v/ymax);
 const svg=el('svg',{viewBox:`0 0 ${W} ${H}`,class:'chart',role:'img','aria-label':'live bytes over program order'},null);
 div.querySelector('.timeline').appendChild(svg);
 for(const v of niceTicks(ymax,5)){el('line',{x1:L,x2:W-R,y1:Y(v),y2:Y(v),class:'grid'},svg);
  el('text',{x:L-6,y:Y(v)+4,'text-anchor':'end'},svg).textContent=human(Math.round(v));}
 const xt=Math.max(1,Math.ceil((steps-1)/10));
 for(let s=0;s<steps;s+=xt){el('text',{x:X(s+0.5),y:H-B+16,'text-anchor':'middle'},svg).textContent=s;}
 el('text',{x:L+PW/2,y:H-4,'text-anchor':'middle'},svg).textContent='program order (schedule step)';
 const stacked=series.length==1&&m.bands&&m.bands.length;
 if(stacked)drawBands(div,svg,m,series[0],X,Y);
 series.forEach((s,i)=>{const n=s.points.length;const sx=k=>X(k*s.steps/n);
  let l='';s.points.forEach((v,k)=>{l+=`${k?'L':'M'}${sx(k)},${Y(v)}L${sx(k+1)},${Y(v)}`;});
  const d=`M${sx(0)},${Y(0)}L`+l.slice(1)+`L${sx(n)},${Y(0)}Z`;
  const two=series.length>1;
  if(stacked)el('path',{d:l,class:'outline'},svg);
  else if(!two||i==0)el('path',{d:d,class:two?'areaA':'area'},svg);
  else el('path',{d:l,class:'lineB'},svg);
  const px=X(s.peak_step+0.5);el('line',{x1:px,x2:px,y1:T,y2:H-B,class:'peak'},svg);
  el('circle',{cx:px,cy:Y(s.peak),r:4,class:'peakdot'},svg);
  const t=el('text',{x:Math.min(px+6,W-R-150),y:T+12+14*i},svg);t.textContent=(two?s.label+' ':'')+'peak '+human(s.peak)+' @ step '+s.peak_step;t.setAttribute('fill','#d62728');});
 el('line',{x1:L,x2:L,y1:T,y2:H-B,class:'axis'},svg);el('line',{x1:L,x2:W-R,y1:H-B,y2:H-B,class:'axis'},svg);
 const cursor=el('line',{x1:0,x2:0,y1:T,y2:H-B,class:'cursor',visibility:'hidden'},svg);
 const hit=el('rect',{x:L,y:T,width:PW,height:PH,fill:'transparent'},svg);
 hit.addEventListener('mousemove',ev=>{const r=svg.getBoundingClientRect();
  const sx=(ev.clientX-r.left)*W/r.width;const step=Math.max(0,Math.min(steps-1,Math.floor((sx-L)/PW*steps)));
  cursor.setAttribute('x1',X(step+0.5));cursor.setAttribute('x2',X(step+0.5));cursor.setAttribute('visibility','visible');
  let html=`<b>step ${step}</b>`;
  for(const s of series){const k=Math.min(s.points.length-1,Math.floor(step*s.points.length/Math.max(1,s.steps)));
   html+=`<br>${series.length>1?esc(s.label)+': ':''}live ${human(s.points[k])}`;}
  const live=m.buffers.filter(b=>b.start<=step&&step<=b.end).sort((a,b)=>b.bytes-a.bytes).slice(0,6);
  if(live.length){html+='<table>';for(const b of live)html+=`<tr><td class=num>${human(b.bytes)}</td><td>${esc(b.kind)}</td><td><code>${esc(b.label)}</code>${b.source?'<br><code class=dim>'+esc(b.source)+'</code>':''}</td></tr>`;html+='</table>';}
  showTip(ev,html);});
 hit.addEventListener('mouseleave',()=>{cursor.setAttribute('visibility','hidden');hideTip();});
 // Lifetimes of the buffers at the peak, largest on top.
 const peak=m.buffers.filter(b=>b.at_peak&&b.start>=0).slice(0,40);
 if(!peak.length)return;
 const RH=14,GH=peak.length*RH+B;const g=el('svg',{viewBox:`0 0 ${W} ${GH}`,class:'chart'},null);
 div.querySelector('.lifetimes').appendChild(g);
 const bmax=Math.max(...peak.map(b=>b.bytes));
 peak.forEach((b,i)=>{const x0=X(b.start),x1=Math.max(X(b.end+1),x0+2);
  const bar=el('rect',{x:x0,y:i*RH+1,width:x1-x0,height:Math.max(3,(RH-2)*Math.sqrt(b.bytes/bmax)),class:'bar '+b.kind},g);
  el('text',{x:L-6,y:i*RH+11,'text-anchor':'end'},g).textContent=human(b.bytes);
  bar.addEventListener('mousemove',ev=>showTip(ev,`<b>${esc(b.label)}</b><br><code>${esc(b.shape)}</code> ${esc(b.kind)}, ${human(b.bytes)}<br>instruction <code>${esc(b.instruction)}</code><br>live steps ${b.start}&ndash;${b.end}<br>${b.source?'source <code>'+esc(b.source)+'</code>':'no source line in the HLO'}${stk(b)}`));
  bar.addEventListener('mouseleave',hideTip);});
 el('line',{x1:L,x2:W-R,y1:peak.length*RH+2,y2:peak.length*RH+2,class:'axis'},g);
 const px=X(m.series[m.series.length-1].peak_step+0.5);el('line',{x1:px,x2:px,y1:0,y2:peak.length*RH+2,class:'peak'},g);
 // The bars' colour is the buffer's kind (not a source line, as above).
 const key=document.createElement('div');key.className='legend';
 key.innerHTML='colour: buffer kind '+[...new Set(peak.map(b=>b.kind))].map(k=>`<span class="kind ${esc(k)}">${esc(k)}</span>`).join(' ')+
  ' &middot; bar height: size &middot; <span style="color:#d62728">red line</span>: the peak';
 div.querySelector('.lifetimes').appendChild(key);
}
document.querySelectorAll('div.module').forEach(div=>drawModule(div,DATA[+div.dataset.id]));
document.body.dataset.rendered='yes';
})();
)js";

std::string Page(absl::string_view title, const std::string& body, const std::string& data) {
  return absl::StrCat("<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>\n<title>", Html(title),
                      "</title>\n<meta name=viewport content=\"width=device-width\">\n<style>", kStyle,
                      "</style></head>\n<body>\n", body,
                      "<div id=tip></div>\n<script type=\"application/json\" id=hlomem-data>", data,
                      "</script>\n<script>", kScript, "</script>\n</body></html>\n");
}

std::string Charts() {
  return "<h3>Live bytes over program order</h3>\n<div class=timeline></div>\n"
         "<div class=legend></div>\n<div class=bandlist></div>\n"
         "<h3>Lifetimes of the buffers at the peak</h3>\n<div class=lifetimes></div>\n";
}

}  // namespace

std::string WriteHtml(const Report& report, const WriteOptions& options) {
  std::string body = "<h1>hlomem report</h1>\n";
  for (const std::string& w : report.warnings) absl::StrAppend(&body, "<p class=bad>", Html(w), "</p>\n");
  std::string data = "[";
  if (report.modules.size() > 1) {
    // The module picker: every module, largest first, a link to its section.
    absl::StrAppend(&body, "<nav class=modules><b>", report.modules.size(),
                    " modules</b><table><tr><th>peak live</th><th>total</th><th>findings</th><th>module</th></tr>\n");
    int anchor = 0;
    for (const ModuleReport& m : report.modules) {
      const std::optional<MemoryNumbers>& n = m.computed ? m.computed : m.xla;
      absl::StrAppend(&body, "<tr><td class=num>",
                      m.computed && m.computed->peak_live_bytes ? HumanBytes(*m.computed->peak_live_bytes) : "",
                      "</td><td class=num>", n ? HumanBytes(n->total_bytes) : "", "</td><td class=num>",
                      m.findings.size(), "</td><td><a href=\"#module-", anchor++, "\">", Html(m.name),
                      "</a></td></tr>\n");
    }
    absl::StrAppend(&body, "</table></nav>\n");
  }
  int id = 0;
  int anchor = 0;
  for (const ModuleReport& m : report.modules) {
    absl::StrAppend(&body, "<h2 id=\"module-", anchor++, "\">", Html(m.name), "</h2>\n<p class=dim>",
                    Html(!m.target.empty() ? m.target : m.backend.empty() ? "backend unknown" : m.backend), ", ", Html(m.stage),
                    m.scheduled ? ", scheduled" : ", not scheduled");
    if (m.computed) absl::StrAppend(&body, m.exact ? ", exact" : ", estimate: ", Html(m.estimate_reason));
    if (!m.files.empty()) absl::StrAppend(&body, "<br><code>", Html(m.files.front()), "</code>");
    absl::StrAppend(&body, "</p>\n");
    if (!m.computed) continue;
    AppendSummaryTable(m, &body);
    absl::StrAppend(&body, "<div class=module data-id=", id, ">\n", Charts(), "</div>\n");
    if (m.rows.size() > kMaxBuffers) {
      // Said, not hidden: the page would grow past what a browser opens.
      absl::StrAppend(&body, "<p class=dim>The charts hold ", kMaxBuffers, " of the ", m.rows.size(),
                      " buffers (those at the peak, then the largest). Every buffer: "
                      "<code>hlomem report --format csv</code> or <code>--format json</code>.</p>\n");
    }
    AppendPeakTable(m, options, &body);
    AppendFindings(m.findings, "Findings", &body);
    absl::StrAppend(&data, id ? "," : "", "{\"series\":[", SeriesJs(m, m.name),
                    "],\"bands\":", BandsJs(m), ",\"buffers\":", BuffersJs(m), "}");
    ++id;
  }
  data += "]";
  return Page("hlomem report", body, data);
}

std::string WriteDiffHtml(const DiffReport& diff, const WriteOptions& options) {
  std::string body = "<h1>hlomem diff</h1>\n<p class=dim>A in grey, B in blue</p>\n";
  std::string data = "[";
  int id = 0;
  for (const ModuleDiff& d : diff.modules) {
    absl::StrAppend(&body, "<h2>", Html(d.name), "</h2>\n<table class=summary><tr><th></th><th>A</th>"
                           "<th>B</th><th>change</th></tr>\n");
    for (Metric metric : kMetrics) {
      const int64_t a = SideMetric(d.a, metric);
      const int64_t b = SideMetric(d.b, metric);
      absl::StrAppend(&body, "<tr><td>", MetricName(metric), "</td><td class=num>", HumanBytes(a),
                      "</td><td class=num>", HumanBytes(b), "</td><td class=num>",
                      SignedBytes(b - a), "</td></tr>\n");
    }
    absl::StrAppend(&body, "</table>\n");
    std::string series;
    if (d.a && d.a->computed) series = SeriesJs(*d.a, "A");
    if (d.b && d.b->computed) absl::StrAppend(&series, series.empty() ? "" : ",", SeriesJs(*d.b, "B"));
    if (!series.empty()) {
      absl::StrAppend(&body, "<div class=module data-id=", id, ">\n", Charts(), "</div>\n");
      const ModuleReport& last = d.b && d.b->computed ? *d.b : *d.a;
      absl::StrAppend(&data, id ? "," : "", "{\"series\":[", series, "],\"buffers\":", BuffersJs(last), "}");
      ++id;
    }
    absl::StrAppend(&body, "<h3>Buffers by change in bytes (", d.changes.size(), ")</h3>\n"
                           "<table class=buffers><tr><th>change</th><th>A</th><th>B</th><th>status</th>"
                           "<th>kind</th><th>shape</th><th>op_name</th><th>source</th></tr>\n");
    int shown = 0;
    for (const BufferChange& c : d.changes) {
      if (shown++ == options.top) break;
      absl::StrAppend(&body, "<tr><td class=num>", SignedBytes(c.delta()),
                      "</td><td class=num>", HumanBytes(c.bytes_a), "</td><td class=num>",
                      HumanBytes(c.bytes_b), "</td><td>", ChangeKindName(c.change),
                      c.at_peak_b ? " (at peak)" : "", "</td><td>", Html(c.kind), "</td><td><code>",
                      Html(c.ShapeShown()), "</code></td><td><code>", Html(c.op_name), "</code></td><td><code>",
                      Html(c.SourceShown()), "</code></td></tr>\n");
    }
    absl::StrAppend(&body, "</table>\n");
    AppendFindings(d.new_findings, "New findings", &body);
    AppendFindings(d.resolved_findings, "Resolved findings", &body);
  }
  data += "]";
  return Page("hlomem diff", body, data);
}

}  // namespace hlomem::report
