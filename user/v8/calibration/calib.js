// isoprof's calibration workload (isoprof calibrate): functions whose
// names V8 keeps in each of the places isoprof must learn to read, each hot
// enough to be sampled, and called through one megamorphic call site so
// that no optimizing compiler inlines one into another; and one chain that
// is inlined, for the code objects' inlining tables.
"use strict";

function calibPlain(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003;
  return s;
}

function calibOneLocal(n) {
  let a = 0;
  const bump = () => a++;
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + bump()) % 1000003;
  return s;
}

function calibThreeLocals(n) {
  let a = 1, b = 2, c = 3;
  const mix = () => (a = (a * 7 + b) % 1009) + (b = (b + c) % 1013) + c;
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + mix()) % 1000003;
  return s;
}

function calibManyLocals(n) {
  let v0 = 0, v1 = 1, v2 = 2, v3 = 3, v4 = 4, v5 = 5, v6 = 6, v7 = 7, v8 = 8, v9 = 9, v10 = 10, v11 = 11, v12 = 12, v13 = 13, v14 = 14, v15 = 15, v16 = 16, v17 = 17, v18 = 18, v19 = 19, v20 = 20, v21 = 21, v22 = 22, v23 = 23, v24 = 24, v25 = 25, v26 = 26, v27 = 27, v28 = 28, v29 = 29, v30 = 30, v31 = 31, v32 = 32, v33 = 33, v34 = 34, v35 = 35, v36 = 36, v37 = 37, v38 = 38, v39 = 39, v40 = 40, v41 = 41, v42 = 42, v43 = 43, v44 = 44, v45 = 45, v46 = 46, v47 = 47, v48 = 48, v49 = 49, v50 = 50, v51 = 51, v52 = 52, v53 = 53, v54 = 54, v55 = 55, v56 = 56, v57 = 57, v58 = 58, v59 = 59, v60 = 60, v61 = 61, v62 = 62, v63 = 63, v64 = 64, v65 = 65, v66 = 66, v67 = 67, v68 = 68, v69 = 69, v70 = 70, v71 = 71, v72 = 72, v73 = 73, v74 = 74, v75 = 75, v76 = 76, v77 = 77, v78 = 78, v79 = 79;
  const all = () => v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7 + v8 + v9 + v10 + v11 + v12 + v13 + v14 + v15 + v16 + v17 + v18 + v19 + v20 + v21 + v22 + v23 + v24 + v25 + v26 + v27 + v28 + v29 + v30 + v31 + v32 + v33 + v34 + v35 + v36 + v37 + v38 + v39 + v40 + v41 + v42 + v43 + v44 + v45 + v46 + v47 + v48 + v49 + v50 + v51 + v52 + v53 + v54 + v55 + v56 + v57 + v58 + v59 + v60 + v61 + v62 + v63 + v64 + v65 + v66 + v67 + v68 + v69 + v70 + v71 + v72 + v73 + v74 + v75 + v76 + v77 + v78 + v79;
  let s = 0;
  for (let i = 0; i < n; i++) { v0 = i & 15; s = (s + all()) % 1000003; }
  return s;
}

function 計測ループ(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s * 17 + (i ^ 5)) % 1000033;
  return s;
}

const calibInferred = function (n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + (i & 7) * 3) % 1000003;
  return s;
};

class CalibShape {
  constructor(k) { this.k = k; }
  calibMethod(n) {
    let s = this.k;
    for (let i = 0; i < n; i++) s = (s * 5 + i) % 1000037;
    return s;
  }
}
const shape = new CalibShape(3);
const calibMethod = (n) => shape.calibMethod(n);

// Functions with no name of their own: V8 infers "calibHolder.calibAssigned"
// and "CalibProto.calibProtoMethod" for them.
const calibHolder = {};
calibHolder.calibAssigned = function (n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s * 7 + (i | 3)) % 1000003;
  return s;
};
function CalibProto() {}
CalibProto.prototype.calibProtoMethod = function (n) {
  let v = 0;
  for (let i = 0; i < n; i++) v = (v * 3 + (i ^ 9)) % 1000033;
  return v;
};

// Small functions TurboFan inlines into their one caller, two deep, so the
// optimized code of calibInlineOuter lists what it inlined.
function calibInlineLeaf(x) {
  return (x * 13 + 7) % 1000003;
}

function calibInlineMid(x) {
  return calibInlineLeaf(x) + calibInlineLeaf(x + 1);
}

function calibInlineOuter(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s + calibInlineMid(i)) % 1000003;
  return s;
}

const workload = [calibPlain, calibOneLocal, calibThreeLocals, calibManyLocals, 計測ループ,
  calibInferred, calibMethod, calibInlineOuter,
  calibHolder.calibAssigned, CalibProto.prototype.calibProtoMethod];

// Runs every function in turn for ms milliseconds; returns a checksum.
function calibRun(ms) {
  const end = Date.now() + ms;
  let s = 0;
  while (Date.now() < end)
    for (let i = 0; i < workload.length; i++) s = (s + workload[i](2000 + (s & 63))) % 1000003;
  return s;
}
