self.onmessage=()=>{};
