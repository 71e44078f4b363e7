/* A small line plotter into an RGB canvas (see plot.h). */
#include "plot.h"

#include "png.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The classic 5x7 font for ASCII 32..126: per glyph five column bytes, the
 * leftmost column in the high byte; bit 0 of a column is the top row, and g j
 * p q y use an eighth row (bit 7) for their descenders. A glyph advances 6
 * font pixels. */
static const uint64_t font5x7[95] = {
    0x0000000000, 0x00005F0000, 0x0007000700, 0x147F147F14, 0x242A7F2A12, 0x2313086462, 0x3649552250,
    0x0005030000, 0x001C224100, 0x0041221C00, 0x14083E0814, 0x08083E0808, 0x0050300000, 0x0808080808,
    0x0060600000, 0x2010080402, 0x3E5149453E, 0x00427F4000, 0x4261514946, 0x2141454B31, 0x1814127F10,
    0x2745454539, 0x3C4A494930, 0x0171090503, 0x3649494936, 0x064949291E, 0x0036360000, 0x0056360000,
    0x0814224100, 0x1414141414, 0x0041221408, 0x0201510906, 0x324979413E, 0x7E1111117E, 0x7F49494936,
    0x3E41414122, 0x7F4141221C, 0x7F49494941, 0x7F09090901, 0x3E4149497A, 0x7F0808087F, 0x00417F4100,
    0x2040413F01, 0x7F08142241, 0x7F40404040, 0x7F020C027F, 0x7F0408107F, 0x3E4141413E, 0x7F09090906,
    0x3E4151215E, 0x7F09192946, 0x4649494931, 0x01017F0101, 0x3F4040403F, 0x1F2040201F, 0x3F4038403F,
    0x6314081463, 0x0708700807, 0x6151494543, 0x007F414100, 0x0204081020, 0x0041417F00, 0x0402010204,
    0x4040404040, 0x0001020400, 0x2054545478, 0x7F48444438, 0x3844444420, 0x384444487F, 0x3854545418,
    0x087E090102, 0x98A4A4A47C, 0x7F08040478, 0x00447D4000, 0x0080807D00, 0x7F10284400, 0x00417F4000,
    0x7C04180478, 0x7C08040478, 0x3844444438, 0xFC24242418, 0x18242424FC, 0x7C08040408, 0x4854545420,
    0x043F444020, 0x3C4040207C, 0x1C2040201C, 0x3C4030403C, 0x4428102844, 0x9CA0A0A07C, 0x4464544C44,
    0x0008364100, 0x00007F0000, 0x0041360800, 0x0804081008,
};

enum { S = 2 };                /* font pixel size of all labels */
enum { CHAR_W = 6 * S, CHAR_H = 7 * S };

/* Okabe-Ito colours, distinguishable with colour-blindness, then black. */
static const uint8_t palette[8][3] = {
    {0, 114, 178}, {213, 94, 0}, {0, 158, 115}, {204, 121, 167},
    {230, 159, 0}, {86, 180, 233}, {120, 120, 120}, {0, 0, 0},
};
static const uint8_t black[3] = {0, 0, 0}, white[3] = {255, 255, 255}, edge[3] = {160, 160, 160},
                     grid[3] = {225, 225, 225}, minor[3] = {242, 242, 242};

int plot_canvas_create(plot_canvas *c, int width, int height)
{
    const int ok = width >= 1 && height >= 1 && width <= 16384 && height <= 16384;
    c->width = width;
    c->height = height;
    c->rgb = ok ? malloc((size_t)width * (size_t)height * 3) : NULL;
    if (c->rgb != NULL) {
        memset(c->rgb, 255, (size_t)width * (size_t)height * 3);
    }
    return c->rgb != NULL ? 0 : -1;
}

void plot_canvas_destroy(plot_canvas *c)
{
    free(c->rgb);
    c->rgb = NULL;
}

int plot_save_png(const plot_canvas *c, const char *path)
{
    return image_png_write(path, c->width, c->height, 3, c->rgb, (size_t)c->width * 3);
}

/* Mix colour rgb into pixel (x, y) with weight alpha / 256. */
static void blend(plot_canvas *c, int x, int y, const uint8_t *rgb, int alpha)
{
    if (x < 0 || y < 0 || x >= c->width || y >= c->height) {
        return;
    }
    uint8_t *p = c->rgb + ((size_t)y * (size_t)c->width + (size_t)x) * 3;
    for (int k = 0; k < 3; k++) {
        p[k] = (uint8_t)((p[k] * (256 - alpha) + rgb[k] * alpha) >> 8);
    }
}

static void fill_rect(plot_canvas *c, int x, int y, int w, int h, const uint8_t *rgb)
{
    for (int j = y; j < y + h; j++) {
        for (int i = x; i < x + w; i++) {
            blend(c, i, j, rgb, 256);
        }
    }
}

/* Text left to right from its top-left (x, y) (up = 0), or bottom to top from
 * its bottom-left (x, y) (up = 1), each font pixel sc x sc. */
static void text(plot_canvas *c, int x, int y, int up, int sc, const uint8_t *rgb, const char *s)
{
    for (int i = 0; s[i] != '\0'; i++) {
        int ch = (unsigned char)s[i];
        const uint64_t g = font5x7[ch >= 32 && ch <= 126 ? ch - 32 : '?' - 32];
        for (int col = 0; col < 5; col++) {
            for (int row = 0; row < 8; row++) {
                int along = (i * 6 + col) * sc;
                if (g >> (8 * (4 - col) + row) & 1) {
                    fill_rect(c, up ? x + row * sc : x + along, up ? y - along - sc : y + row * sc,
                              sc, sc, rgb);
                }
            }
        }
    }
}

void plot_text(plot_canvas *c, int x, int y, int scale, const uint8_t rgb[3], const char *s)
{
    if (c != NULL && c->rgb != NULL && s != NULL && scale >= 1) {
        text(c, x, y, 0, scale, rgb, s);
    }
}

static int text_width(const char *s)
{
    return s == NULL || *s == '\0' ? 0 : (int)strlen(s) * CHAR_W - S;
}

/* The plot area in pixels and the axis ranges (log10 units on log axes). */
typedef struct frame {
    plot_canvas *c;
    int left, top, right, bottom;
    double x0, x1, y0, y1;
    int log_x, log_y;
} frame;

static int valid(double v, int log_axis)
{
    return isfinite(v) && (!log_axis || v > 0.0);
}

/* Axis units to pixels (ax, ay); data values to pixels (px, py). */
static double ax(const frame *f, double u)
{
    return f->left + (u - f->x0) / (f->x1 - f->x0) * (f->right - f->left);
}

static double ay(const frame *f, double u)
{
    return f->bottom - (u - f->y0) / (f->y1 - f->y0) * (f->bottom - f->top);
}

static double px(const frame *f, double x)
{
    return ax(f, f->log_x ? log10(x) : x);
}

static double py(const frame *f, double y)
{
    return ay(f, f->log_y ? log10(y) : y);
}

/* A pixel inside the plot area only. */
static void dot(const frame *f, int x, int y, const uint8_t *rgb, int alpha)
{
    if (x >= f->left && x <= f->right && y >= f->top && y <= f->bottom) {
        blend(f->c, x, y, rgb, alpha);
    }
}

enum { DASH = 8 }; /* pixels on, then off, of a dashed line */

/* A line of the given pen width, clipped to the plot area; dashed if dash is
 * not NULL: *dash counts the pixels along a polyline, so that its dashes
 * continue from one segment to the next. */
static void stroke(const frame *f, double xa, double ya, double xb, double yb, int width,
                   const uint8_t *rgb, int *dash)
{
    const double lim = 1e5; /* far-off points (a user range) must not spin the loop */
    if (fabs(xa) > lim || fabs(ya) > lim || fabs(xb) > lim || fabs(yb) > lim) {
        return;
    }
    int steps = (int)fmax(fabs(xb - xa), fabs(yb - ya)) + 1;
    for (int k = 0; k <= steps; k++) {
        if (dash != NULL && (*dash)++ / DASH % 2 != 0) {
            continue;
        }
        int x = (int)lround(xa + (xb - xa) * k / steps), y = (int)lround(ya + (yb - ya) * k / steps);
        for (int j = 0; j < width; j++) {
            for (int i = 0; i < width; i++) {
                dot(f, x + i - width / 2, y + j - width / 2, rgb, 256);
            }
        }
    }
}

static void line(const frame *f, double xa, double ya, double xb, double yb, int width,
                 const uint8_t *rgb)
{
    stroke(f, xa, ya, xb, yb, width, rgb, NULL);
}

/* How series s is drawn: its style, else colour and marker s, solid. */
static plot_style style_of(const plot_style *styles, int s)
{
    const plot_style plain = {s, 0};
    return styles != NULL ? styles[s] : plain;
}

/* A one-pixel outline around (x, y, w, h). */
static void box(plot_canvas *c, int x, int y, int w, int h, const uint8_t *rgb)
{
    fill_rect(c, x - 1, y - 1, w + 2, 1, rgb);
    fill_rect(c, x - 1, y + h, w + 2, 1, rgb);
    fill_rect(c, x - 1, y, 1, h, rgb);
    fill_rect(c, x + w, y, 1, h, rgb);
}

/* Marker shape (series index) at (x, y), radius r, filled or hollow. */
static int in_shape(int shape, int dx, int dy, int r)
{
    switch (shape % 4) {
    case 0: return abs(dx) <= r && abs(dy) <= r;                 /* square */
    case 1: return abs(dx) + abs(dy) <= r + 1;                   /* diamond */
    case 2: return dy <= r && dy >= -r && 2 * abs(dx) <= dy + r; /* triangle */
    default: return dx * dx + dy * dy <= r * r + 1;              /* disc */
    }
}

static void marker(const frame *f, int shape, double x, double y, int open, const uint8_t *rgb)
{
    const int r = 5, cx = (int)lround(x), cy = (int)lround(y);
    for (int dy = -r - 1; dy <= r + 1; dy++) {
        for (int dx = -r - 1; dx <= r + 1; dx++) {
            if (in_shape(shape, dx, dy, r)) {
                int inner = in_shape(shape, dx, dy, r - 2);
                dot(f, cx + dx, cy + dy, open && inner ? white : rgb, 256);
            }
        }
    }
}

/* The range of x (axis 0) or y (axis 1) in axis units: the caller's, or that
 * of the data (y with its spreads) padded by 5%. */
static int axis_range(const plot_axes *a, int axis, double *lo, double *hi)
{
    const int log_axis = axis ? a->log_y : a->log_x;
    double mn = axis ? a->ymin : a->xmin, mx = axis ? a->ymax : a->xmax;
    if (mn < mx) {
        *lo = log_axis ? log10(mn) : mn;
        *hi = log_axis ? log10(mx) : mx;
        return isfinite(*lo) && isfinite(*hi) ? 0 : -1;
    }
    mn = INFINITY;
    mx = -INFINITY;
    for (int s = 0; s < a->n_series; s++) {
        const plot_series *p = &a->series[s];
        for (int i = 0; i < p->n; i++) {
            const double v[3] = {axis ? p->y[i] : p->x[i], axis && p->lo ? p->lo[i] : NAN,
                                 axis && p->hi ? p->hi[i] : NAN};
            for (int k = 0; k < 3; k++) {
                if (valid(v[k], log_axis)) {
                    mn = fmin(mn, log_axis ? log10(v[k]) : v[k]);
                    mx = fmax(mx, log_axis ? log10(v[k]) : v[k]);
                }
            }
        }
    }
    if (!(mn <= mx)) {
        return -1;
    }
    double pad = mx > mn ? 0.05 * (mx - mn) : (log_axis ? 0.5 : fmax(0.5, 0.1 * fabs(mn)));
    *lo = !log_axis && mn >= 0.0 && mn - pad < 0.0 ? 0.0 : mn - pad;
    *hi = mx + pad;
    return 0;
}

/* Tick positions in axis units; on log axes also minor ones (is_minor set:
 * no label). Returns the count (at most max). */
static int ticks(double a0, double a1, int log_axis, double *pos, uint8_t *is_minor, int max)
{
    int n = 0;
    if (!log_axis) {
        double raw = (a1 - a0) / 5.0, mag = pow(10.0, floor(log10(raw))), step;
        step = raw / mag < 1.5 ? mag : raw / mag < 3.5 ? 2 * mag : raw / mag < 7.5 ? 5 * mag : 10 * mag;
        for (double v = ceil(a0 / step) * step; v <= a1 + 1e-9 * step && n < max; v += step) {
            is_minor[n] = 0;
            pos[n++] = fabs(v) < 1e-9 * step ? 0.0 : v;
        }
        return n;
    }
    const int few = a1 - a0 < 2.0; /* under two decades: also label 2 and 5 */
    for (double k = floor(a0); k <= ceil(a1) && n < max; k += 1.0) {
        for (int m = 1; m <= 9 && n < max; m++) {
            double u = k + log10((double)m);
            if (u >= a0 && u <= a1) {
                is_minor[n] = !(m == 1 || (few && (m == 2 || m == 5)));
                pos[n++] = u;
            }
        }
    }
    return n;
}

/* "%g" without the exponent's plus sign and leading zeros: 1e5, not 1e+05. */
static void format(char *buf, size_t size, double v)
{
    char *e;
    snprintf(buf, size, "%g", v);
    if ((e = strchr(buf, 'e')) != NULL) {
        snprintf(e, size - (size_t)(e - buf), "e%d", atoi(e + 1));
    }
}

static void legend(const frame *f, const plot_axes *a, const plot_style *styles)
{
    int wmax = 0, n = 0;
    for (int s = 0; s < a->n_series; s++) {
        int tw = a->series[s].label != NULL ? text_width(a->series[s].label) : -1;
        wmax = tw > wmax ? tw : wmax;
        n += tw >= 0;
    }
    const int row = CHAR_H + 8, w = 52 + wmax, h = n * row + 8;
    const int left = a->legend == PLOT_TOP_LEFT || a->legend == PLOT_BOTTOM_LEFT;
    const int top = a->legend == PLOT_TOP_LEFT || a->legend == PLOT_TOP_RIGHT;
    const int x = left ? f->left + 10 : f->right - 10 - w, y = top ? f->top + 10 : f->bottom - 10 - h;
    if (n == 0) {
        return;
    }
    fill_rect(f->c, x, y, w, h, white);
    box(f->c, x, y, w, h, edge);
    for (int s = 0, k = 0; s < a->n_series; s++) {
        const plot_series *p = &a->series[s];
        if (p->label != NULL) {
            const int cy = y + 4 + k++ * row + row / 2;
            const plot_style st = style_of(styles, s);
            int dash = 0;
            stroke(f, x + 8, cy, x + 38, cy, 2, palette[st.colour % 8], st.dashed ? &dash : NULL);
            marker(f, st.colour, x + 23, cy, st.dashed, palette[st.colour % 8]);
            text(f->c, x + 46, cy - CHAR_H / 2, 0, S, black, p->label);
        }
    }
}

/* Layer `pass` of series s: 0 the band, 1 the line and error bars, 2 the markers. */
static void draw_series(const frame *f, const plot_series *p, plot_style st, int pass)
{
    const uint8_t *rgb = palette[st.colour % 8];
    int dash = 0;
    for (int i = 0, j; i < p->n; i = j) {
        for (j = i + 1; j < p->n && !(valid(p->x[j], f->log_x) && valid(p->y[j], f->log_y)); j++) {
        } /* j: the next drawable point */
        if (!valid(p->x[i], f->log_x) || !valid(p->y[i], f->log_y)) {
            continue;
        }
        const double x = px(f, p->x[i]), y = py(f, p->y[i]);
        const int spread_i = p->lo != NULL && p->hi != NULL && valid(p->lo[i], f->log_y) &&
                             valid(p->hi[i], f->log_y);
        if (pass == 0 && spread_i && p->spread == PLOT_BAND && j < p->n &&
            valid(p->lo[j], f->log_y) && valid(p->hi[j], f->log_y)) {
            /* Shade column by column between the two points' spreads. */
            double xb = px(f, p->x[j]), la = py(f, p->lo[i]), ha = py(f, p->hi[i]);
            double lb = py(f, p->lo[j]), hb = py(f, p->hi[j]);
            for (int col = (int)lround(x); col < (int)lround(xb); col++) {
                double t = (col - x) / (xb - x);
                for (int r = (int)lround(ha + t * (hb - ha)); r <= lround(la + t * (lb - la)); r++) {
                    dot(f, col, r, rgb, 48);
                }
            }
        } else if (pass == 1) {
            if (j < p->n) {
                stroke(f, x, y, px(f, p->x[j]), py(f, p->y[j]), 2, rgb, st.dashed ? &dash : NULL);
            }
            if (spread_i && p->spread == PLOT_BARS) {
                double lo = py(f, p->lo[i]), hi = py(f, p->hi[i]);
                line(f, x, lo, x, hi, 1, rgb);
                line(f, x - 4, lo, x + 4, lo, 1, rgb);
                line(f, x - 4, hi, x + 4, hi, 1, rgb);
            }
        } else if (pass == 2) {
            marker(f, st.colour, x, y, st.dashed || (p->open != NULL && p->open[i]), rgb);
        }
    }
}

int plot_draw(plot_canvas *c, int x0, int y0, int w, int h, const plot_axes *a)
{
    return plot_draw_styled(c, x0, y0, w, h, a, NULL);
}

int plot_draw_styled(plot_canvas *c, int x0, int y0, int w, int h, const plot_axes *a,
                     const plot_style *styles)
{
    frame f = {c, 0, 0, 0, 0, 0, 0, 0, 0, a != NULL && a->log_x, a != NULL && a->log_y};
    if (c == NULL || c->rgb == NULL || a == NULL || (a->n_series > 0 && a->series == NULL) ||
        axis_range(a, 0, &f.x0, &f.x1) != 0 || axis_range(a, 1, &f.y0, &f.y1) != 0) {
        return -1;
    }
    for (int s = 0; styles != NULL && s < a->n_series; s++) {
        if (styles[s].colour < 0) {
            return -1;
        }
    }
    /* Ticks first: the widest y label sets the left margin. */
    enum { MAXT = 128 };
    double xt[MAXT], yt[MAXT];
    uint8_t xminor[MAXT] = {0}, yminor[MAXT];
    char label[32];
    int nx = 0, ny = ticks(f.y0, f.y1, a->log_y, yt, yminor, MAXT), ylab_w = 0;
    for (int i = 0; a->xticks != NULL && i < a->n_xticks && nx < MAXT; i++) {
        if (valid(a->xticks[i], a->log_x)) {
            xt[nx++] = a->log_x ? log10(a->xticks[i]) : a->xticks[i];
        }
    }
    if (a->xticks == NULL) {
        nx = ticks(f.x0, f.x1, a->log_x, xt, xminor, MAXT);
    }
    for (int i = 0; i < ny; i++) {
        format(label, sizeof label, a->log_y ? pow(10.0, yt[i]) : yt[i]);
        ylab_w = !yminor[i] && text_width(label) > ylab_w ? text_width(label) : ylab_w;
    }
    f.left = x0 + 12 + (a->ylabel ? CHAR_H + 12 : 0) + ylab_w + 8;
    f.top = y0 + 12 + (a->title ? CHAR_H + 12 : 0);
    f.right = x0 + w - 20;
    f.bottom = y0 + h - 12 - (a->xlabel ? CHAR_H + 10 : 0) - CHAR_H - 10;
    if (f.right - f.left < 40 || f.bottom - f.top < 40) {
        return -1;
    }
    fill_rect(c, x0, y0, w, h, white);
    for (int i = 0; i < nx; i++) { /* grid under everything else */
        line(&f, ax(&f, xt[i]), f.top, ax(&f, xt[i]), f.bottom, 1, xminor[i] ? minor : grid);
    }
    for (int i = 0; i < ny; i++) {
        line(&f, f.left, ay(&f, yt[i]), f.right, ay(&f, yt[i]), 1, yminor[i] ? minor : grid);
    }
    for (int pass = 0; pass < 3; pass++) {
        for (int s = 0; s < a->n_series; s++) {
            draw_series(&f, &a->series[s], style_of(styles, s), pass);
        }
    }
    /* The frame, ticks and labels lie outside the area: drawn on the canvas. */
    box(c, f.left, f.top, f.right - f.left + 1, f.bottom - f.top + 1, black);
    for (int i = 0, last = x0; i < nx; i++) { /* last: right end of the last x label */
        int x = (int)lround(ax(&f, xt[i]));
        fill_rect(c, x, f.bottom + 1, 1, xminor[i] ? 3 : 6, black);
        format(label, sizeof label, a->log_x ? pow(10.0, xt[i]) : xt[i]);
        if (!xminor[i] && x - text_width(label) / 2 > last + CHAR_W) { /* skip if crowded */
            text(c, x - text_width(label) / 2, f.bottom + 10, 0, S, black, label);
            last = x + text_width(label) / 2;
        }
    }
    for (int i = 0; i < ny; i++) {
        int y = (int)lround(ay(&f, yt[i]));
        fill_rect(c, f.left - (yminor[i] ? 4 : 7), y, yminor[i] ? 3 : 6, 1, black);
        format(label, sizeof label, a->log_y ? pow(10.0, yt[i]) : yt[i]);
        if (!yminor[i]) {
            text(c, f.left - 10 - text_width(label), y - CHAR_H / 2, 0, S, black, label);
        }
    }
    if (a->title != NULL) {
        text(c, (f.left + f.right - text_width(a->title)) / 2, y0 + 12, 0, S, black, a->title);
    }
    if (a->xlabel != NULL) {
        text(c, (f.left + f.right - text_width(a->xlabel)) / 2, f.bottom + 20 + CHAR_H, 0, S,
             black, a->xlabel);
    }
    if (a->ylabel != NULL) {
        text(c, x0 + 12, (f.top + f.bottom + text_width(a->ylabel)) / 2, 1, S, black, a->ylabel);
    }
    legend(&f, a, styles);
    return 0;
}
