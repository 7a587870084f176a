package jinja

import "strings"

// Content formats a server may pass message content in: "string" (the
// text parts joined into one string) or "openai" (the list of parts).
const (
	FormatString = "string"
	FormatOpenAI = "openai"
)

// ContentFormatVLLM is vLLM's "auto" detection of the chat-template
// content format, walked over our AST the way vLLM walks Jinja2's
// (vllm/renderers/hf.py @02e64f58 and chat_utils.py of the v0.9 era,
// _detect_content_format; server-preprocessing.md §1.3):
//
//   - the variables that hold the messages are "messages" plus, breadth
//     first, every {% set x = y %} whose right side is one of them, seen
//     through filters, tests and slices;
//   - a message variable is the target of a for loop over one of those;
//   - the format is "openai" when some for loop iterates over M.content or
//     M['content'] (again through filters, tests and slices) for a message
//     variable M, else "string".
//
// Where vLLM's walk trips an assert (a namespace or tuple target assigned
// from messages, a tuple loop target), it falls back to "string", and so
// does this. vLLM ignores scopes; so does this. One deviation: vLLM's
// breadth-first walk never ends on mutually assigned variables
// (a = b, b = a); this visits each name once.
func (t *Template) ContentFormatVLLM() string {
	var fors []*forNode
	var sets []*setNode
	collectStatements(t.nodes, &fors, &sets)

	// _iter_nodes_assign_var_or_elems(root, "messages")
	messageLists := []string{"messages"}
	seen := map[string]bool{"messages": true}
	for queue := []string{"messages"}; len(queue) > 0; {
		related := queue[0]
		queue = queue[1:]
		for _, s := range sets {
			if !isVarOrElemsAccess(s.value, related, "") {
				continue
			}
			if s.namespace != "" || strings.Contains(s.target, ",") {
				return FormatString // assert isinstance(lhs, Name) fails
			}
			if s.target != related && !seen[s.target] {
				seen[s.target] = true
				messageLists = append(messageLists, s.target)
				queue = append(queue, s.target)
			}
		}
	}
	// _iter_nodes_assign_messages_item: loop targets over those lists.
	var messageVars []string
	for _, f := range fors {
		for _, v := range messageLists {
			if isVarOrElemsAccess(f.iter, v, "") {
				if f.keyVar != "" {
					return FormatString // tuple target: the assert fails
				}
				messageVars = append(messageVars, f.valVar)
				break
			}
		}
	}
	// _iter_nodes_assign_content_item: the first loop over M['content'].
	for _, f := range fors {
		for _, v := range messageVars {
			if isVarOrElemsAccess(f.iter, v, "content") {
				if f.keyVar != "" {
					return FormatString
				}
				return FormatOpenAI
			}
		}
	}
	return FormatString
}

// ContentFormatSGLang is SGLang's detection
// (python/sglang/srt/jinja_template_utils.py @1dc194d5,
// detect_jinja_template_content_format; server-preprocessing.md §5): a for
// loop over message/msg/m ['content'] or .content, with those literal
// names only, means "openai"; aliases are not followed.
func (t *Template) ContentFormatSGLang() string {
	var fors []*forNode
	var sets []*setNode
	collectStatements(t.nodes, &fors, &sets)
	for _, f := range fors {
		for _, v := range [...]string{"message", "msg", "m"} {
			if isVarOrElemsAccess(f.iter, v, "content") {
				return FormatOpenAI
			}
		}
	}
	return FormatString
}

// collectStatements lists the for loops and set statements in document
// order, depth first, like Jinja2's find_all.
func collectStatements(nodes []node, fors *[]*forNode, sets *[]*setNode) {
	for _, n := range nodes {
		switch n := n.(type) {
		case *forNode:
			*fors = append(*fors, n)
			collectStatements(n.body, fors, sets)
			collectStatements(n.elseBody, fors, sets)
		case *setNode:
			*sets = append(*sets, n)
		case *ifNode:
			for _, b := range n.branches {
				collectStatements(b.body, fors, sets)
			}
		case *setBlockNode:
			collectStatements(n.body, fors, sets)
		case *macroNode:
			collectStatements(n.body, fors, sets)
		case *callNode:
			collectStatements(n.body, fors, sets)
		case *filterBlockNode:
			collectStatements(n.body, fors, sets)
		}
	}
}

// isVarOrElemsAccess is vLLM's _is_var_or_elems_access: e is varname (key
// empty) or varname[key] / varname.key, possibly under filters, tests and
// slices.
func isVarOrElemsAccess(e expr, varname, key string) bool {
	switch n := e.(type) {
	case *filterExpr:
		return n.expr != nil && isVarOrElemsAccess(n.expr, varname, key)
	case *testExpr:
		return isVarOrElemsAccess(n.expr, varname, key)
	case *sliceExpr:
		return isVarOrElemsAccess(n.obj, varname, key)
	}
	if key == "" {
		return isVarAccess(e, varname)
	}
	switch n := e.(type) {
	case *itemExpr:
		lit, ok := n.key.(*litExpr)
		return ok && isVarAccess(n.obj, varname) && lit.val.IsString() && lit.val.AsString() == key
	case *attrExpr:
		return isVarAccess(n.obj, varname) && n.attr == key
	}
	return false
}

func isVarAccess(e expr, varname string) bool {
	n, ok := e.(*nameExpr)
	return ok && n.name == varname
}
