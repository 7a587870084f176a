package vision

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Format says which of a model folder's configurations the server reads:
// transformers' (config.json, preprocessor_config.json,
// processor_config.json) or Mistral's (tekken.json's image settings, what
// vLLM reads with --tokenizer-mode mistral).
type Format string

const (
	FormatHF      Format = "hf"
	FormatMistral Format = "mistral"
)

// Load reads the processor configuration of the model in dir:
// transformers' files where config.json is there, else Mistral's
// tekken.json.
func Load(dir string) (Processor, error) {
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err == nil {
		return LoadFormat(dir, FormatHF)
	}
	if _, err := os.Stat(filepath.Join(dir, "tekken.json")); err == nil {
		return LoadFormat(dir, FormatMistral)
	}
	return nil, fmt.Errorf("%s: no config.json or tekken.json to read the image processing from", dir)
}

// LoadFormat reads the configuration of the given format.
func LoadFormat(dir string, format Format) (Processor, error) {
	switch format {
	case FormatHF:
		return loadHF(dir)
	case FormatMistral:
		return loadMistral(dir)
	}
	return nil, fmt.Errorf("format %q: not hf or mistral", format)
}

// readJSON decodes dir/name into v; absent files leave v as it is.
func readJSON(dir, name string, v any, required bool) error {
	path := filepath.Join(dir, name)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

type edgesJSON struct {
	ShortestEdge int `json:"shortest_edge"`
	LongestEdge  int `json:"longest_edge"`
	Height       int `json:"height"`
	Width        int `json:"width"`
}

// patchJSON is a patch size written as a number or {"height", "width"}.
type patchJSON struct{ Height, Width int }

func (p *patchJSON) UnmarshalJSON(b []byte) error {
	var n int
	if json.Unmarshal(b, &n) == nil {
		p.Height, p.Width = n, n
		return nil
	}
	var o struct{ Height, Width int }
	if err := json.Unmarshal(b, &o); err != nil {
		return fmt.Errorf("patch_size: %s is not a number or {height, width}", b)
	}
	p.Height, p.Width = o.Height, o.Width
	return nil
}

// hfConfig is what the rules read from the three transformers files; null
// or absent values stay zero and the class defaults apply.
type hfConfig struct {
	ModelType     string   `json:"model_type"`
	Architectures []string `json:"architectures"`
	VisionConfig  struct {
		ModelType         string   `json:"model_type"`
		PatchSize         any      `json:"patch_size"`
		ImageSize         any      `json:"image_size"`
		PixelShuffleRatio *float64 `json:"pixel_shuffle_ratio"`
	} `json:"vision_config"`
	MMTokensPerImage int `json:"mm_tokens_per_image"`

	// preprocessor_config.json
	Pre struct {
		MinPixels        *int       `json:"min_pixels"`
		MaxPixels        *int       `json:"max_pixels"`
		PatchSize        *patchJSON `json:"patch_size"`
		MergeSize        *int       `json:"merge_size"`
		Size             *edgesJSON `json:"size"`
		MaxImageSize     *edgesJSON `json:"max_image_size"`
		DoImageSplitting *bool      `json:"do_image_splitting"`
		DoPanAndScan     *bool      `json:"do_pan_and_scan"`
		PanScanMinCrop   *int       `json:"pan_and_scan_min_crop_size"`
		PanScanMaxCrops  *int       `json:"pan_and_scan_max_num_crops"`
		PanScanMinRatio  *float64   `json:"pan_and_scan_min_ratio_to_activate"`
		MinPatches       *int       `json:"min_patches"`
		MaxPatches       *int       `json:"max_patches"`
		ResizeToMax      *bool      `json:"resize_to_max_canvas"`
		GridPinpoints    [][2]int   `json:"image_grid_pinpoints"`
		ImageSeqLength   *int       `json:"image_seq_length"`
	}
	// processor_config.json
	Proc struct {
		ImageSeqLength    *int     `json:"image_seq_length"`
		ImageSeqLen       *int     `json:"image_seq_len"`
		PatchSize         *int     `json:"patch_size"`
		SpatialMergeSize  *int     `json:"spatial_merge_size"`
		NumImageTokens    *int     `json:"num_image_tokens"`
		VisionAspectRatio string   `json:"vision_aspect_ratio"`
		FeatureSelect     string   `json:"vision_feature_select_strategy"`
		PixelShuffleRatio *float64 `json:"pixel_shuffle_ratio"`
	}
}

func intOr(p *int, def int) int {
	if p != nil {
		return *p
	}
	return def
}

func loadHF(dir string) (Processor, error) {
	var c hfConfig
	if err := readJSON(dir, "config.json", &c, true); err != nil {
		return nil, err
	}
	if err := readJSON(dir, "preprocessor_config.json", &c.Pre, false); err != nil {
		return nil, err
	}
	if err := readJSON(dir, "processor_config.json", &c.Proc, false); err != nil {
		return nil, err
	}
	where := filepath.Join(dir, "preprocessor_config.json")
	switch mt := c.ModelType; {
	case mt == "qwen2_vl" || mt == "qwen2_5_vl" || mt == "qwen3_vl" || mt == "qwen3_vl_moe":
		q := &qwen{family: Qwen2VL, patch: 14, merge: 2, minPixels: 56 * 56, maxPixs: 28 * 28 * 1280}
		if strings.HasPrefix(mt, "qwen3") {
			q.family = Qwen3VL
		}
		if c.Pre.PatchSize != nil {
			q.patch = c.Pre.PatchSize.Height
		}
		q.merge = intOr(c.Pre.MergeSize, q.merge)
		if s := c.Pre.Size; s != nil {
			q.minPixels, q.maxPixs = s.ShortestEdge, s.LongestEdge
		}
		q.minPixels = intOr(c.Pre.MinPixels, q.minPixels)
		q.maxPixs = intOr(c.Pre.MaxPixels, q.maxPixs)
		if q.patch <= 0 || q.merge <= 0 || q.minPixels <= 0 || q.maxPixs <= 0 {
			return nil, fmt.Errorf("%s: patch_size, merge_size and the pixel limits must be positive", where)
		}
		return q, nil
	case mt == "gemma3":
		g := &gemma3{seqLen: 256, minCrop: 256, maxCrops: 4, minRatio: 1.2}
		g.seqLen = intOr(c.Proc.ImageSeqLength, intOr(c.Pre.ImageSeqLength, g.seqLen))
		if c.Pre.DoPanAndScan != nil {
			g.panScan = *c.Pre.DoPanAndScan
		}
		g.minCrop = intOr(c.Pre.PanScanMinCrop, g.minCrop)
		g.maxCrops = intOr(c.Pre.PanScanMaxCrops, g.maxCrops)
		if c.Pre.PanScanMinRatio != nil {
			g.minRatio = *c.Pre.PanScanMinRatio
		}
		return g, nil
	case mt == "llama4":
		l := &llama4{tile: 336, maxPatches: 16}
		if s := c.Pre.Size; s != nil && s.Height > 0 {
			if s.Height != s.Width {
				return nil, fmt.Errorf("%s: size %d×%d: Llama 4 tiles must be square", where, s.Width, s.Height)
			}
			l.tile = s.Height
		}
		l.maxPatches = intOr(c.Pre.MaxPatches, l.maxPatches)
		if c.Pre.ResizeToMax != nil {
			l.toMaxCanvas = *c.Pre.ResizeToMax
		}
		patch := intOr(c.Proc.PatchSize, 14)
		ratio := 0.5
		if c.Proc.PixelShuffleRatio != nil {
			ratio = *c.Proc.PixelShuffleRatio
		} else if c.VisionConfig.PixelShuffleRatio != nil {
			ratio = *c.VisionConfig.PixelShuffleRatio
		}
		down := int(pyRoundHalfEven(1 / (ratio * ratio)))
		if patch <= 0 || down <= 0 {
			return nil, fmt.Errorf("%s: patch_size %d and pixel_shuffle_ratio %v give no tokens", dir, patch, ratio)
		}
		l.perChunk = (l.tile / patch) * (l.tile / patch) / down
		if l.maxPatches >= 1 && l.maxPatches <= maxTiles {
			l.res = llama4Resolutions(l.maxPatches, l.tile)
		}
		return l, nil
	case (mt == "llava" && c.VisionConfig.ModelType == "pixtral") || mt == "mistral3":
		// The two model classes vLLM serves these with differ in the
		// placeholder of a string-content template: vLLM picks the class
		// by config.json's architectures.
		fam := PixtralHF
		if slices.Contains(c.Architectures, "Mistral3ForConditionalGeneration") || (mt == "mistral3" && !slices.Contains(c.Architectures, "LlavaForConditionalGeneration")) {
			fam = Mistral3
		}
		// The preprocessor's patch_size is not read: PixtralProcessor
		// overrides it with its own patch_size × spatial_merge_size.
		p := &pixtral{family: fam, merge: 1, longest: 1024}
		p.countPatch = intOr(c.Proc.PatchSize, 16)
		p.merge = intOr(c.Proc.SpatialMergeSize, 1)
		if s := c.Pre.Size; s != nil && s.LongestEdge > 0 {
			p.longest = s.LongestEdge
		}
		if p.countPatch <= 0 || p.merge <= 0 {
			return nil, fmt.Errorf("%s: patch_size %d and spatial_merge_size %d must be positive", where, p.countPatch, p.merge)
		}
		return p, nil
	case mt == "internvl":
		v := &internvl{tile: 448, minPatches: 1, maxPatches: 12, crop: true, seqLen: 256}
		if s := c.Pre.Size; s != nil && s.Height > 0 {
			if s.Height != s.Width {
				return nil, fmt.Errorf("%s: size %d×%d: InternVL tiles must be square here", where, s.Width, s.Height)
			}
			v.tile = s.Height
		}
		v.minPatches = intOr(c.Pre.MinPatches, v.minPatches)
		v.maxPatches = intOr(c.Pre.MaxPatches, v.maxPatches)
		v.seqLen = intOr(c.Proc.ImageSeqLength, v.seqLen)
		return v, nil
	case mt == "llava_onevision":
		l := &llavaOneVision{pinpoints: c.Pre.GridPinpoints, tile: 384, baseTok: intOr(c.Proc.NumImageTokens, 729), maxPatch: 9}
		if s := c.Pre.Size; s != nil && s.Height > 0 {
			l.tile = s.Height
		}
		if len(l.pinpoints) == 0 {
			return nil, fmt.Errorf("%s: no image_grid_pinpoints", where)
		}
		if ar := c.Proc.VisionAspectRatio; ar != "" {
			var n int
			if _, err := fmt.Sscanf(ar, "anyres_max_%d", &n); err != nil || n <= 0 {
				return nil, fmt.Errorf("%s: vision_aspect_ratio %q is not anyres_max_N", filepath.Join(dir, "processor_config.json"), ar)
			}
			l.maxPatch = n
		}
		l.defaultFS = c.Proc.FeatureSelect == "default"
		return l, nil
	case mt == "idefics3" || mt == "smolvlm":
		d := &idefics{family: Idefics3, longest: 4 * 364, tile: 364, split: true, seqLen: 169}
		if mt == "smolvlm" {
			d.family = SmolVLM
		}
		if s := c.Pre.Size; s != nil && s.LongestEdge > 0 {
			d.longest = s.LongestEdge
		}
		if s := c.Pre.MaxImageSize; s != nil && s.LongestEdge > 0 {
			d.tile = s.LongestEdge
		}
		if c.Pre.DoImageSplitting != nil {
			d.split = *c.Pre.DoImageSplitting
		}
		d.seqLen = intOr(c.Proc.ImageSeqLen, d.seqLen)
		return d, nil
	case mt == "internvl_chat":
		return nil, fmt.Errorf("%s: model type internvl_chat (InternVL's own format): its tiling is not checked here; use the model's -hf conversion (model type internvl)", dir)
	}
	if c.VisionConfig.ModelType == "" && c.VisionConfig.PatchSize == nil && c.VisionConfig.ImageSize == nil {
		return nil, fmt.Errorf("%s: model type %q has no vision_config: %w", filepath.Join(dir, "config.json"), c.ModelType, ErrTextOnly)
	}
	return nil, fmt.Errorf("%s: model type %q: no image rule for it (families: %s)", filepath.Join(dir, "config.json"), c.ModelType, familyList())
}

func familyList() string {
	s := make([]string, len(Families))
	for i, f := range Families {
		s[i] = string(f)
	}
	return strings.Join(s, ", ")
}

func loadMistral(dir string) (Processor, error) {
	var t struct {
		Image *struct {
			PatchSize    int `json:"image_patch_size"`
			MaxImageSize int `json:"max_image_size"`
			MergeSize    int `json:"spatial_merge_size"`
		} `json:"image"`
	}
	if err := readJSON(dir, "tekken.json", &t, true); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "tekken.json")
	if t.Image == nil {
		return nil, fmt.Errorf("%s: no image settings: %w", path, ErrTextOnly)
	}
	p := &pixtral{family: MistralTekken, countPatch: t.Image.PatchSize, merge: max(t.Image.MergeSize, 1), longest: t.Image.MaxImageSize}
	if p.countPatch <= 0 || p.longest <= 0 {
		return nil, fmt.Errorf("%s: image_patch_size %d and max_image_size %d must be positive", path, p.countPatch, p.longest)
	}
	return p, nil
}
