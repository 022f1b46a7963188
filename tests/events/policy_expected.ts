// Expected values shared by the policy tests, written from Nomad's answers (not from routes/events): the
// capabilities a namespace's `policy = "read"` and `policy = "scale"` expand to in Nomad's RulesJSON (v1.11.3).

export const readCaps = [
  "list-jobs",
  "parse-job",
  "read-job",
  "csi-list-volume",
  "csi-read-volume",
  "read-job-scaling",
  "list-scaling-policies",
  "read-scaling-policy",
  "host-volume-read",
];

export const scaleCaps = [
  "list-scaling-policies",
  "read-scaling-policy",
  "read-job-scaling",
  "scale-job",
  "read-job",
  "submit-recommendation",
];
